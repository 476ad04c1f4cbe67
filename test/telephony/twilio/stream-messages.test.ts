// The Media Streams messages as Twilio's "Media Streams - WebSocket Messages" page shows them
// (https://www.twilio.com/docs/voice/media-streams/websocket-messages), and what is refused.
import { describe, expect, it } from "vitest";
import {
  readTwilioStreamCommand,
  readTwilioStreamEvent,
  TwilioStreamCommand,
  TwilioStreamEvent,
} from "../../../src/telephony/twilio/stream-messages.js";

const MZ = `MZ${"a".repeat(32)}`;
const CA = `CA${"b".repeat(32)}`;
const AC = `AC${"c".repeat(32)}`;

const FROM_TWILIO = {
  connected: { event: "connected", protocol: "Call", version: "1.0.0" },
  start: {
    event: "start",
    sequenceNumber: "1",
    start: {
      accountSid: AC,
      streamSid: MZ,
      callSid: CA,
      tracks: ["inbound"],
      mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
      customParameters: { token: "t" },
    },
    streamSid: MZ,
  },
  media: {
    event: "media",
    sequenceNumber: "3",
    media: { track: "inbound", chunk: "1", timestamp: "5", payload: "no+JhoaJjpw=" },
    streamSid: MZ,
  },
  dtmf: {
    event: "dtmf",
    streamSid: MZ,
    sequenceNumber: "5",
    dtmf: { track: "inbound_track", digit: "1" },
  },
  mark: { event: "mark", sequenceNumber: "4", streamSid: MZ, mark: { name: "my label" } },
  stop: {
    event: "stop",
    sequenceNumber: "5",
    streamSid: MZ,
    stop: { accountSid: AC, callSid: CA },
  },
} as const;

describe("TwilioStreamEvent (from Twilio)", () => {
  it("takes every documented message", () => {
    for (const message of Object.values(FROM_TWILIO))
      expect(TwilioStreamEvent.safeParse(message).success, message.event).toBe(true);
  });

  it("keeps counts as strings and refuses numbers", () => {
    const numeric = { ...FROM_TWILIO.media, sequenceNumber: 3 };
    expect(TwilioStreamEvent.safeParse(numeric).success).toBe(false);
    const chunk = { ...FROM_TWILIO.media, media: { ...FROM_TWILIO.media.media, chunk: 1 } };
    expect(TwilioStreamEvent.safeParse(chunk).success).toBe(false);
  });

  it("refuses another media format, a bad SID, an unknown event, bad base64", () => {
    const start = FROM_TWILIO.start;
    const pcm = {
      ...start,
      start: { ...start.start, mediaFormat: { ...start.start.mediaFormat, sampleRate: 16000 } },
    };
    const badSid = { ...FROM_TWILIO.stop, streamSid: "MZ123" };
    const badPayload = {
      ...FROM_TWILIO.media,
      media: { ...FROM_TWILIO.media.media, payload: "not base64!" },
    };
    for (const m of [pcm, badSid, badPayload, { event: "hello" }])
      expect(TwilioStreamEvent.safeParse(m).success).toBe(false);
  });

  it("drops fields Twilio may add rather than refusing the message", () => {
    const parsed = TwilioStreamEvent.parse({ ...FROM_TWILIO.connected, extra: 1 });
    expect(parsed).toEqual(FROM_TWILIO.connected);
  });

  it("reads a frame: the message, or a problem that says where", () => {
    expect(readTwilioStreamEvent(JSON.stringify(FROM_TWILIO.dtmf))).toEqual({
      ok: true,
      message: FROM_TWILIO.dtmf,
    });
    expect(readTwilioStreamEvent("{")).toEqual({ ok: false, problem: "not JSON" });
    const bad = readTwilioStreamEvent(
      JSON.stringify({ ...FROM_TWILIO.dtmf, dtmf: { digit: "x" } }),
    );
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.problem).toMatch(/^dtmf\./);
  });
});

describe("TwilioStreamCommand (to Twilio)", () => {
  it("takes media, mark and clear as documented", () => {
    for (const message of [
      { event: "media", streamSid: MZ, media: { payload: "no+JhoaJjpw=" } },
      { event: "mark", streamSid: MZ, mark: { name: "my label" } },
      { event: "clear", streamSid: MZ },
    ])
      expect(TwilioStreamCommand.safeParse(message).success, message.event).toBe(true);
  });

  it("refuses unknown fields, unknown events, empty or malformed payloads", () => {
    for (const message of [
      { event: "clear", streamSid: MZ, sequenceNumber: "1" },
      { event: "media", streamSid: MZ, media: { payload: "no+J", track: "outbound" } },
      { event: "media", streamSid: MZ, media: { payload: "" } },
      { event: "media", streamSid: MZ, media: { payload: "no+J=" } },
      { event: "mark", streamSid: MZ, mark: {} },
      { event: "start", streamSid: MZ },
      { event: "clear" },
    ])
      expect(TwilioStreamCommand.safeParse(message).success, JSON.stringify(message)).toBe(false);
    expect(readTwilioStreamCommand('{"event":"dance"}').ok).toBe(false);
  });
});
