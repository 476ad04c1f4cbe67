/**
 * The demo page and the timeline viewer (Workers static assets), and the one thing they need
 * from the gateway that a page may not hold itself: a session and its tokens. The page asks
 * `/demo/sessions`; the Worker creates the session through its own API with its API key,
 * which never leaves it. Served on a local host, or anywhere with `DEMO_PAGE = "on"` (which
 * lets anyone who finds the page open sessions: for demos, not for production).
 */

import { z } from "zod";
import type { Env } from "../contracts/worker-env.js";
import { bytesToBase64Url } from "../providers/base64.js";
import { jsonError } from "../vocabulary/http-error.js";
import { isLocalHostname, safeEqual } from "./auth.js";

// (Assets drop the .html: /timeline.html redirects to /timeline.)
const PAGES = new Set(["/", "/index.html", "/timeline", "/timeline.html"]);
const FILES = /^\/[\w.-]+\.(js|css|svg|png|ico)$/;

const DemoSessionBody = z
  .object({
    agent: z.string().min(1).max(64).optional(),
    /** Simulator knobs, as POST /v1/sessions takes them in metadata.simulator. */
    simulator: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  })
  .strict();

/** The demo's answer to `request`, or null when it is not the demo's (or the demo is off). */
export async function serveDemo(
  request: Request,
  env: Env,
  url: URL,
  demoOn: boolean,
  api: (request: Request) => Promise<Response>,
  apiKey: string | undefined,
): Promise<Response | null> {
  const assets = env.ASSETS;
  if (assets === undefined || !(demoOn || isLocalHostname(url.hostname))) return null;
  const path = url.pathname;
  if (request.method === "GET" && (PAGES.has(path) || FILES.test(path)))
    return assets.fetch(request);
  const token = /^\/demo\/sessions\/([0-9a-f-]{36})\/token$/.exec(path);
  if (path !== "/demo/sessions" && token === null) return null;
  if (request.method !== "POST")
    return jsonError(405, "method_not_allowed", "the demo's session routes take POST");
  // Only the demo page itself (same origin), never another site the browser has open.
  const origin = request.headers.get("Origin");
  if (origin !== null && origin !== url.origin)
    return jsonError(403, "forbidden_origin", "the demo's routes answer their own page only");
  const secret = apiKey ?? "liveline-local-demo";
  const auth: Record<string, string> =
    apiKey === undefined ? {} : { Authorization: `Bearer ${apiKey}` };
  if (path === "/demo/sessions") {
    let body: z.infer<typeof DemoSessionBody>;
    try {
      const text = await request.text();
      body = DemoSessionBody.parse(text.trim() === "" ? {} : JSON.parse(text));
    } catch {
      return jsonError(400, "bad_request", 'the body is {"agent"?, "simulator"?}');
    }
    const create = {
      ...(body.agent === undefined ? {} : { agent: body.agent }),
      metadata: body.simulator === undefined ? {} : { simulator: body.simulator },
    };
    const created = await api(
      new Request(new URL("/v1/sessions", url), {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify(create),
      }),
    );
    if (created.status !== 201) return created;
    const answer = (await created.json()) as { sessionId: string };
    // The grant lets this page (and only a holder of it) ask for fresh tokens of this session.
    return Response.json(
      { ...answer, demoGrant: await grantFor(answer.sessionId, secret) },
      { status: 201 },
    );
  }
  const sessionId = token?.[1] ?? "";
  const grant = request.headers.get("X-Demo-Grant") ?? "";
  // Compared in constant time: the grant is a MAC, and a compare that stops at the first
  // differing character would tell an attacker, by its timing, how much of a guess was right.
  if (!(await safeEqual(grant, await grantFor(sessionId, secret))))
    return jsonError(
      403,
      "forbidden",
      "a fresh token needs the grant the session was created with",
    );
  return api(
    new Request(new URL(`/v1/sessions/${sessionId}/token`, url), { method: "POST", headers: auth }),
  );
}

/** HMAC-SHA256 of the session id under the Worker's key, base64url: the demo's grant. */
async function grantFor(sessionId: string, secret: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`demo:${sessionId}`)),
  );
  return bytesToBase64Url(mac);
}
