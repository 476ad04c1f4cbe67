// The GPT-Live face's WebRTC sessions (simulator/gpt-live, webrtc-stand-in.ts): a creation
// starts the session without session.start (strict, as the SDK's types say), its browser is a
// stand-in that gets what was said before it joined, and its stand-in SDP answer.
import { describe, expect, it } from "vitest";
import { LiveCreateParams } from "../../../src/simulator/gpt-live/strict-schemas.js";
import { liveSessionPath } from "../../../src/simulator/route.js";
import { offersAudio, PeerSlot, standInAnswer } from "../../../src/simulator/webrtc-stand-in.js";
import { LiveDriver, TOOLS, types } from "./driver.js";

const OFFER = "v=0\r\ns=-\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n";
const session = {
  model: "gpt-live-1",
  instructions: "Be brief.",
  audio: { output: { voice: "marin" } },
  delegation: { type: "responses", responses: { model: "gpt-5.5", tools: TOOLS } },
  safety_identifier: "user-1",
};

describe("a WebRTC creation", () => {
  it("is strict: the SDK's fields only, no WebSocket audio format", () => {
    const ok = { session, transport: { type: "webrtc", sdp: OFFER } };
    expect(LiveCreateParams.safeParse(ok).success).toBe(true);
    const format = { ...session, audio: { format: { type: "audio/pcm", rate: 24000 } } };
    expect(LiveCreateParams.safeParse({ ...ok, session: format }).success).toBe(false);
    expect(LiveCreateParams.safeParse({ ...ok, extra: 1 }).success).toBe(false);
    expect(LiveCreateParams.safeParse({ session }).success).toBe(false);
    expect(
      LiveCreateParams.safeParse({ ...ok, transport: { type: "sip", sdp: OFFER } }).success,
    ).toBe(false);
  });

  it("starts the session: session.started on the browser's channel, none on a sideband", () => {
    const d = new LiveDriver();
    const parsed = LiveCreateParams.parse({ session, transport: { type: "webrtc", sdp: OFFER } });
    const sent = d.feed({ type: "media_start", session: parsed.session });
    expect(types(sent)).toEqual(["session.started"]);
    expect(d.side).toEqual([]);
    const started = sent[0]!.session as Record<string, unknown>;
    expect(started.audio).toMatchObject({ output: { voice: "marin" } });
    // Started: a session.start on its channel is refused as for any running session.
    expect(types(d.start())).toEqual(["error"]);
  });
});

describe("the stand-in browser", () => {
  it("is reached at /peer of the session's id, beside its sidebands' /attach", () => {
    expect(liveSessionPath("/v1/live/sessions/sess_a.1/peer")).toEqual({
      id: "sess_a.1",
      kind: "peer",
    });
    expect(liveSessionPath("/v1/live/sessions/sess_a.1/attach")?.kind).toBe("attach");
    expect(liveSessionPath("/v1/live/sessions/sess_a.1/other")).toBeNull();
  });

  it("gets what its session said before it joined, in order; nothing once the call ended", () => {
    const slot = new PeerSlot();
    slot.send("one");
    slot.send("two");
    const got: unknown[] = [];
    const ws = { send: (d: unknown) => got.push(d), close: () => undefined };
    expect(slot.open).toBe(true);
    slot.join(ws);
    slot.send("three");
    expect(got).toEqual(["one", "two", "three"]);
    expect(slot.open).toBe(false);
    const ended = new PeerSlot();
    ended.close(1000, "session closed");
    expect(ended.open).toBe(false);
  });

  it("takes an offer with audio; answers with a stand-in SDP naming the stand-in's path", () => {
    expect(offersAudio(OFFER)).toBe(true);
    expect(offersAudio("v=0\r\ns=-\r\n")).toBe(false);
    const answer = standInAnswer("sess_a.1");
    expect(answer.startsWith("v=0\r\n")).toBe(true);
    expect(answer).toContain("a=x-liveline-peer:/v1/live/sessions/sess_a.1/peer");
  });
});
