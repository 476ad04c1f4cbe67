/**
 * The demo page and the timeline viewer (Workers static assets), and the one thing they need
 * from the gateway that a page may not hold itself: a session and its tokens. The page asks
 * `/demo/sessions`; the Worker creates the session through its own API with its API key,
 * which never leaves it. Served on a local host, or anywhere with `DEMO_PAGE = "on"` (which
 * lets anyone who finds the page open sessions: for demos, not for production).
 */
import { z } from "zod";
import type { Env } from "../env.js";
import { isLocalHostname } from "./auth.js";

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
  if (request.method !== "POST") return null;
  const auth: Record<string, string> =
    apiKey === undefined ? {} : { Authorization: `Bearer ${apiKey}` };
  if (path === "/demo/sessions") {
    let body: z.infer<typeof DemoSessionBody>;
    try {
      body = DemoSessionBody.parse(await request.json());
    } catch {
      return Response.json(
        { error: { code: "bad_request", message: 'the body is {"agent"?, "simulator"?}' } },
        { status: 400 },
      );
    }
    const create = {
      ...(body.agent === undefined ? {} : { agent: body.agent }),
      metadata: body.simulator === undefined ? {} : { simulator: body.simulator },
    };
    return api(
      new Request(new URL("/v1/sessions", url), {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify(create),
      }),
    );
  }
  const token = /^\/demo\/sessions\/([0-9a-f-]{36})\/token$/.exec(path);
  if (token !== null) {
    return api(
      new Request(new URL(`/v1/sessions/${token[1]}/token`, url), {
        method: "POST",
        headers: auth,
      }),
    );
  }
  return null;
}
