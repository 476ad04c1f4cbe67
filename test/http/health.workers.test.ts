import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

describe("GET /health", () => {
  it("answers ok with the version, as PROTOCOL.md says (and, an extension, the default provider)", async () => {
    const res = await exports.default.fetch("http://liveline.test/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      ok: true,
      version: expect.any(String),
      provider: "simulator",
    });
  });

  it("answers unknown routes with a JSON error", async () => {
    const res = await exports.default.fetch("http://liveline.test/nope");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: "not_found" } });
  });
});

describe("GET /health, other methods", () => {
  it("answers 405 with Allow: GET", async () => {
    const res = await exports.default.fetch("http://liveline.test/health", { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET");
    expect(await res.json()).toMatchObject({ error: { code: "method_not_allowed" } });
  });
});
