import type { ProviderBindings, ProviderVarNames } from "../provider-registry.js";
import type { SessionApi } from "./session-api.js";

/**
 * The Worker's bindings: wrangler.toml `[vars]`, secrets and the Durable Object namespace.
 * Every var arrives as a string (or is absent); `configLoader` in src/worker-config.ts turns them into
 * typed values. Each built-in provider's vars and bindings come from its folder in src/providers
 * (the registry collects them). Secrets (`API_KEY`, `TOKEN_SECRET`, the providers' keys) come
 * from `wrangler secret put` in a deployment and from `.dev.vars` locally.
 */
export interface Env extends ProviderBindings, Partial<Record<ProviderVarNames, string>> {
  /** Typed by the object's RPC surface, not its class: the env sits below the session layer. */
  SESSION: DurableObjectNamespace<SessionApi & Rpc.DurableObjectBranded>;
  /**
   * The provider when a session names none: "gemini" | "openai" | … (default: the first whose
   * key is set, else "simulator" where the app adds it; src/worker-config.ts). The simulator's
   * binding is not here: an app that adds it declares liveline/simulator's `SimulatorEnv`.
   */
  PROVIDER?: string;
  /** Secret: the bearer key of the app's backend. */
  API_KEY?: string;
  /** Secret: the HS256 key of session tokens. */
  TOKEN_SECRET?: string;
  /** Comma-separated list of origins allowed to open a session's WebSocket. */
  ALLOWED_ORIGINS?: string;
  TOKEN_TTL_SECONDS?: string;
  IDLE_TIMEOUT_MS?: string;
  MAX_FRAME_BYTES?: string;
  MAX_FRAMES_PER_SECOND?: string;
  MAX_CLIENTS_PER_SESSION?: string;
  TOOL_TIMEOUT_MS?: string;
  /** "on": POST /v1/sessions/:id/restart kills the session's object (soak runs only). */
  FAULT_INJECTION?: string;
  /**
   * "on": serve the simulator (GET /simulator/gemini and the service's own
   * /ws/…BidiGenerateContent path) on any host (it is always served on a local host).
   */
  SIMULATOR_ROUTE?: string;
  /**
   * "on": serve the demo page (`/`, `/timeline.html`) and let it create sessions on any host
   * (it is always served on a local host, when the Worker has its ASSETS binding).
   */
  DEMO_PAGE?: string;
  /** Secret: the Twilio auth token that signs its webhooks (phone calls answered). */
  TWILIO_AUTH_TOKEN?: string;
  /** Where Twilio's REST API is (call transfers): https://api.twilio.com unless set. */
  TWILIO_API_BASE_URL?: string;
  /** Telnyx's webhook public key (base64): it verifies Telnyx's webhooks (phone calls answered). */
  TELNYX_PUBLIC_KEY?: string;
  /** Secret: the Telnyx API key (call transfers and hang-ups, TeXML REST). */
  TELNYX_API_KEY?: string;
  /** The codec of Telnyx calls' streams: PCMU (default) or PCMA (A-law trunks). */
  TELNYX_CODEC?: string;
  /** Where Telnyx's REST API is: https://api.telnyx.com unless set. */
  TELNYX_API_BASE_URL?: string;
  /** Secret, local development only: the key the demo page's Telnyx calls are signed with. */
  TELNYX_DEMO_SIGNING_KEY?: string;
  /** The Plivo account's auth ID (call transfers and hang-ups). */
  PLIVO_AUTH_ID?: string;
  /** Secret: the Plivo auth token that signs its webhooks (phone calls answered). */
  PLIVO_AUTH_TOKEN?: string;
  /** Where Plivo's REST API is: https://api.plivo.com unless set. */
  PLIVO_API_BASE_URL?: string;
  /** Secret: the Vonage signature secret that signs its webhooks (phone calls answered). */
  VONAGE_SIGNATURE_SECRET?: string;
  /** The Vonage application's id (call transfers and hang-ups). */
  VONAGE_APPLICATION_ID?: string;
  /** Secret: the Vonage application's private key, PKCS#8 PEM (call transfers and hang-ups). */
  VONAGE_PRIVATE_KEY?: string;
  /** Where Vonage's REST API is: https://api.nexmo.com unless set. */
  VONAGE_API_BASE_URL?: string;
  /** Traces (OTLP/HTTP): see src/telemetry/otel-settings.ts. `…_HEADERS` is a secret. */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_HEADERS?: string;
  OTEL_EXPORTER_OTLP_PROTOCOL?: string;
  OTEL_SERVICE_NAME?: string;
  /** Workers static assets (wrangler.toml `[assets]`): the demo page and the timeline viewer. */
  ASSETS?: Fetcher;
  /**
   * The usage database (D1; wrangler.toml `[[d1_databases]]`, its table from `migrations/`):
   * one row per session, summed by GET /v1/usage. Without it, usage stays in each session.
   */
  USAGE_DB?: D1Database;
  /**
   * Recordings (R2; wrangler.toml `[[r2_buckets]]`): a session's audio and its model wire, for
   * the agents and sessions that ask for them. Without it nothing is recorded.
   */
  RECORDINGS?: R2Bucket;
  RECORDING_PART_MS?: string;
  RECORDING_MAX_BYTES?: string;
  RECORDING_RETENTION_DAYS?: string;
}
