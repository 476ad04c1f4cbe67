/**
 * The demo page's routes (found by the black-box attack): served on a local host only, to
 * its own page only (Origin), and a fresh token only for the holder of the session's grant —
 * never for a session the app's backend made.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { BASE, createSession } from "./helpers.js";

const LOCAL = "http://localhost:8787";
const post = (path: string, init: RequestInit = {}, base = LOCAL) =>
  exports.default.fetch(`${base}${path}`, { method: "POST", ...init });

describe("the demo's routes", () => {
  it("create a session with a grant, and give fresh tokens to the grant's holder only", async () => {
    const res = await post("/demo/sessions", { body: "" }); // an empty body is {}
    expect(res.status).toBe(201);
    const created = (await res.json()) as { sessionId: string; token: string; demoGrant: string };
    expect(created.demoGrant).toMatch(/^[\w-]{43}$/);
    const fresh = await post(`/demo/sessions/${created.sessionId}/token`, {
      headers: { "X-Demo-Grant": created.demoGrant },
    });
    expect(fresh.status).toBe(200);
    const without = await post(`/demo/sessions/${created.sessionId}/token`);
    expect(without.status).toBe(403);
    // A session the backend created: no grant can be had for it from the demo.
    const backend = await createSession();
    const other = await post(`/demo/sessions/${backend.sessionId}/token`, {
      headers: { "X-Demo-Grant": created.demoGrant },
    });
    expect(other.status).toBe(403);
  });

  it("compare the grant in constant time (the project's safeEqual), never with !==", async () => {
    const res = await post("/demo/sessions", { body: "" });
    const created = (await res.json()) as { sessionId: string; demoGrant: string };
    const compare = vi.spyOn(crypto.subtle, "timingSafeEqual");
    try {
      const wrong = `${created.demoGrant.slice(0, -1)}${created.demoGrant.endsWith("A") ? "B" : "A"}`;
      const refused = await post(`/demo/sessions/${created.sessionId}/token`, {
        headers: { "X-Demo-Grant": wrong },
      });
      expect(refused.status).toBe(403);
      expect(compare).toHaveBeenCalled();
    } finally {
      compare.mockRestore();
    }
  });

  it("answer their own page only, POST only, and nothing on a non-local host", async () => {
    const cross = await post("/demo/sessions", {
      headers: { Origin: "https://evil.example", "Content-Type": "text/plain" },
      body: "{}",
    });
    expect(cross.status).toBe(403);
    const get = await exports.default.fetch(`${LOCAL}/demo/sessions`);
    expect(get.status).toBe(405);
    const remote = await post("/demo/sessions", { body: "{}" }, BASE);
    expect(remote.status).toBe(404);
    const page = await exports.default.fetch(`${BASE}/`);
    expect(page.status).toBe(404);
  });
});
