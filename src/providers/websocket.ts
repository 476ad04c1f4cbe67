/** Opening a provider's WebSocket from a Worker (workerd's fetch-style upgrade). */

import { withHeadersDeadline } from "../outbound.js";

/**
 * An upgrade not answered by then is aborted: an endpoint that takes the connection and never
 * answers would otherwise hold one of the invocation's six connections waiting for headers
 * for good (src/outbound.ts). Below the core's connect timer (15 s), so that each attempt it
 * gives up on is gone before it tries again.
 */
export const CONNECT_DEADLINE_MS = 10_000;

/**
 * workerd opens an outbound WebSocket with a fetch carrying `Upgrade: websocket`, and its
 * fetch takes only http(s) URLs: wss:// becomes https://, ws:// becomes http://.
 */
export function fetchableUrl(url: string): string {
  return url.replace(/^wss:/i, "https:").replace(/^ws:/i, "http:");
}

/**
 * The service refused the upgrade in a way retrying cannot fix (a bad key, an unknown
 * model, a malformed request: 400, 401, 403, 404, 422), with its own words.
 */
export class UpstreamRefused extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {
    super(
      `the model service refused the connection (HTTP ${status}${reason ? `: ${reason}` : ""})`,
    );
    this.name = "UpstreamRefused";
  }
}

const REFUSALS = new Set([400, 401, 403, 404, 422]);
const MAX_REASON = 300;

/**
 * Opens an outbound WebSocket from a fetch-style upgrade response. A refusal says why, in
 * the service's words (its JSON error's message), with `secrets` blanked out of them.
 */
export async function acceptUpgrade(
  response: Promise<Response>,
  secrets: readonly string[] = [],
): Promise<WebSocket> {
  const res = await response;
  const ws = res.webSocket;
  if (!ws) {
    const reason = redact(await refusalReason(res), secrets);
    if (REFUSALS.has(res.status)) throw new UpstreamRefused(res.status, reason);
    throw new Error(`upgrade refused with HTTP ${res.status}${reason ? `: ${reason}` : ""}`);
  }
  ws.accept();
  ws.binaryType = "arraybuffer";
  return ws;
}

/** `{"error":{"message":…}}` (Google's and OpenAI's form) or the body's first line. */
export async function refusalReason(res: Response): Promise<string> {
  const text = (await res.text().catch(() => "")).slice(0, 4096);
  let message = text.split("\n")[0]?.trim() ?? "";
  try {
    const json = JSON.parse(text) as { error?: { message?: unknown } | string };
    const m = typeof json.error === "string" ? json.error : json.error?.message;
    if (typeof m === "string") message = m;
  } catch {
    // not JSON: the first line it is
  }
  return message.length > MAX_REASON ? `${message.slice(0, MAX_REASON)}…` : message;
}

/** `text` with each of `secrets` blanked out (a refusal's words can echo a credential). */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join("[redacted]");
  return out;
}

/**
 * Opens `url` as a WebSocket with extra request headers (credentials, protocols); an upgrade
 * not answered within `deadlineMs` is aborted (a `TimeoutError`).
 */
export function openWebSocket(
  url: string,
  headers: Record<string, string> = {},
  deadlineMs = CONNECT_DEADLINE_MS,
): Promise<WebSocket> {
  // Whatever authenticates the request (query values, header values) never reaches a reason.
  const secrets = [...new URL(url).searchParams.values(), ...Object.values(headers)].flatMap(
    (v) => [v, v.replace(/^Bearer\s+/i, "")],
  );
  const upgrade = withHeadersDeadline((input, init) => fetch(input, init), deadlineMs);
  return acceptUpgrade(
    upgrade(fetchableUrl(url), { headers: { Upgrade: "websocket", ...headers } }),
    secrets,
  );
}
