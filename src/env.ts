import type { SessionApi } from "./session/session-api.js";
import type { SimulatorApi } from "./simulator/api.js";

/**
 * The Worker's bindings: wrangler.toml `[vars]`, secrets and the Durable Object namespace.
 * Every var arrives as a string (or is absent); `loadConfig` in src/config.ts turns them into
 * typed values. Secrets (`API_KEY`, `TOKEN_SECRET`, `GEMINI_API_KEY`, `VERTEX_ACCESS_TOKEN`) come from
 * `wrangler secret put` in a deployment and from `.dev.vars` locally.
 */
export interface Env {
  /** Typed by the object's RPC surface, not its class: the env sits below the session layer. */
  SESSION: DurableObjectNamespace<SessionApi & Rpc.DurableObjectBranded>;
  LIVELINE_VERSION?: string;
  /** "simulator" (default) | "gemini" | "openai": the provider when a session names none. */
  PROVIDER?: string;
  /** Secret. */
  GEMINI_API_KEY?: string;
  GEMINI_LIVE_URL?: string;
  GEMINI_MODEL?: string;
  /** "developer" (default: the Gemini API with GEMINI_API_KEY) | "vertex" (Vertex AI). */
  GEMINI_ENDPOINT?: string;
  VERTEX_PROJECT?: string;
  /** Default "us-central1". */
  VERTEX_LOCATION?: string;
  /** Secret: an OAuth access token for Vertex AI (minted outside liveline). */
  VERTEX_ACCESS_TOKEN?: string;
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
  /** JSON object overriding the model's capability record, e.g. {"silentHonoured":false}. */
  GEMINI_CAPABILITIES?: string;
  /** Context compression: unset = sliding window at the service's defaults; N = trigger tokens; "off". */
  GEMINI_COMPRESSION_TRIGGER_TOKENS?: string;
  /** "on": POST /v1/sessions/:id/restart kills the session's object (soak runs only). */
  FAULT_INJECTION?: string;
  /**
   * "on": serve the simulator (GET /simulator/gemini and the service's own
   * /ws/…BidiGenerateContent path) on any host (it is always served on a local host).
   */
  SIMULATOR_ROUTE?: string;
  /** Default knobs of the built-in simulator, as a query string (e.g. "timeScale=0"). */
  SIMULATOR_KNOBS?: string;
  GEMINI_SIMULATOR: DurableObjectNamespace<SimulatorApi & Rpc.DurableObjectBranded>;
}
