/**
 * A Gemini connection is never closed for the service's slowness to answer a ping (issue 52):
 * its pongs were measured at 8 to 30 s, and a 20 s keepalive killed healthy connections
 * (aicc2025/sip-to-ai PR #14). liveline sends no keepalive of its own (workerd answers the
 * service's pings on the socket; the Workers API has no ping to send), and nothing in the core
 * closes a live connection for the model's silence while the session is used: here 5 minutes
 * of it, the user's microphone open. Control: a session nobody uses closes its connection
 * after its idle time, said as `idle` (a setting of the app's, not a dead connection).
 */
import { describe, expect, it } from "vitest";
import { capabilitiesFor } from "../../../src/providers/gemini/capabilities.js";
import { CURRENT_GEMINI_LIVE_MODEL } from "../../../src/providers/gemini/lifecycle.js";
import { chunk, live } from "../../core/sessions.js";

const gemini = () =>
  live({
    capabilities: capabilitiesFor(CURRENT_GEMINI_LIVE_MODEL, "developer"),
    idleTimeoutMs: 60_000,
  });
const closes = (h: ReturnType<typeof live>) =>
  h.effects.filter((e) => e.type === "close_upstream").length;

describe("a Gemini connection whose model is silent", () => {
  it("stays open for 5 minutes of its silence while the user's microphone is open (no keepalive to fail)", () => {
    const h = gemini();
    for (let s = 0; s < 300; s++) {
      h.clientAudio("phone", chunk);
      h.advance(1_000);
    }
    expect(closes(h)).toBe(0);
    expect(h.state.upstream.phase).toBe("live");
  });

  it("control: nobody using the session, it closes after its idle time, said as idle", () => {
    const h = gemini();
    h.advance(90_000);
    expect(closes(h)).toBe(1);
    expect(h.durableFrames("phone").at(-1)).toMatchObject({ type: "status", state: "idle" });
  });
});
