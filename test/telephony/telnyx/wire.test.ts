/**
 * Telnyx's wire as liveline speaks it: the TeXML answer, the stream's messages read into the
 * contract's events (and what is refused), the TeXML REST calls (with a deadline, and a
 * refusal told without the key).
 */
import { describe, expect, it } from "vitest";
import { readTexmlAnswer } from "../../../src/simulator/telnyx/call-stand-in.js";
import { texmlCallPath, updateTexmlCall } from "../../../src/telephony/telnyx/call-api.js";
import { telnyxCarrier } from "../../../src/telephony/telnyx/carrier.js";

const vars = { TELNYX_CODEC: "PCMA" as const } as Parameters<typeof telnyxCarrier.connect>[2];
const start = (encoding: string, sample_rate = 8000) =>
  JSON.stringify({
    event: "start",
    sequence_number: "1",
    stream_id: "32DE0DEA-53CB-4B21-89A4-9E1819C043BC",
    start: {
      user_id: "3e6f995f-85f7-4705-9741-53b116d28237",
      call_control_id: "v3:abc",
      from: "+15550001111",
      to: "+15550002222",
      custom_parameters: { token: "tok" },
      media_format: { encoding, sample_rate, channels: 1 },
    },
  });

describe("Telnyx's answer", () => {
  it("connects the stream both ways in the configured codec, its token a <Parameter>", () => {
    const { body, contentType } = telnyxCarrier.connect(
      "wss://gw.test/s/1",
      "tok&",
      vars,
      "v3:abc",
      null,
    );
    expect(contentType).toMatch(/xml/);
    expect(body).toContain(
      '<Connect><Stream url="wss://gw.test/s/1" bidirectionalMode="rtp" codec="PCMA" bidirectionalCodec="PCMA"><Parameter name="token" value="tok&amp;"/>',
    );
    const read = readTexmlAnswer(body, false);
    expect(read).toMatchObject({
      parameters: { token: "tok&" },
      codec: "PCMA",
      bidirectionalCodec: "PCMA",
    });
  });

  it("asks for μ-law when TELNYX_CODEC is unset", () => {
    const { body } = telnyxCarrier.connect(
      "wss://gw.test/s/1",
      "t",
      {} as typeof vars,
      "v3:abc",
      null,
    );
    expect(body).toContain('codec="PCMU" bidirectionalCodec="PCMU"');
  });
});

describe("Telnyx's stream messages", () => {
  it("reads a start's codec as the line, its token and its call", () => {
    expect(telnyxCarrier.readStreamEvent(start("PCMA"))).toEqual({
      ok: true,
      event: {
        kind: "start",
        streamId: "32DE0DEA-53CB-4B21-89A4-9E1819C043BC",
        callId: "v3:abc",
        token: "tok",
        line: "PCMA",
      },
    });
  });

  it("refuses a start in a codec liveline does not speak", () => {
    for (const read of [
      telnyxCarrier.readStreamEvent(start("OPUS")),
      telnyxCarrier.readStreamEvent(start("PCMU", 16000)),
    ])
      expect(read).toMatchObject({
        ok: false,
        problem: expect.stringMatching(/liveline speaks PCMU or PCMA/),
      });
  });

  it("reads media, marks, keys and stop; the outbound track is no caller's audio; errors are problems", () => {
    const media = (track: string) =>
      JSON.stringify({
        event: "media",
        sequence_number: "2",
        stream_id: "s",
        media: { track, chunk: "1", timestamp: "20", payload: "AAAA" },
      });
    expect(telnyxCarrier.readStreamEvent(media("inbound"))).toEqual({
      ok: true,
      event: { kind: "audio", payload: "AAAA" },
    });
    expect(telnyxCarrier.readStreamEvent(media("outbound"))).toEqual({
      ok: true,
      event: { kind: "ack" },
    });
    expect(
      telnyxCarrier.readStreamEvent(
        JSON.stringify({ event: "mark", stream_id: "s", mark: { name: "1:20" } }),
      ),
    ).toEqual({ ok: true, event: { kind: "mark", name: "1:20" } });
    expect(
      telnyxCarrier.readStreamEvent(
        JSON.stringify({ event: "dtmf", stream_id: "s", dtmf: { digit: "#" } }),
      ),
    ).toEqual({ ok: true, event: { kind: "key", digit: "#" } });
    expect(
      telnyxCarrier.readStreamEvent(JSON.stringify({ event: "stop", stream_id: "s" })),
    ).toEqual({ ok: true, event: { kind: "stop" } });
    expect(
      telnyxCarrier.readStreamEvent(
        JSON.stringify({
          event: "error",
          payload: { code: 100002, title: "Unknown error", detail: "boom" },
        }),
      ),
    ).toEqual({ ok: false, problem: "Telnyx reported a stream error: boom (100002)" });
    expect(telnyxCarrier.readStreamEvent(new ArrayBuffer(4))).toMatchObject({ ok: false });
    expect(telnyxCarrier.readStreamEvent('{"event":"hello"}')).toMatchObject({ ok: false });
  });
});

describe("Telnyx's TeXML REST calls", () => {
  const call = {
    baseUrl: "https://api.telnyx.test/",
    apiKey: "KEY0123456789abcdef",
    accountSid: "3e6f995f-85f7-4705-9741-53b116d28237",
    callSid: "v3:abc_DEF-1",
  };

  it("posts the new TeXML with the API key, the CallSid in the path", async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const outcome = await updateTexmlCall(
      { ...call, update: { Texml: "<Response/>" } },
      async (url, init) => {
        seen.push({ url, init });
        return new Response("{}", { status: 200 });
      },
    );
    expect(outcome).toEqual({ ok: true });
    expect(seen[0]!.url).toBe(
      `https://api.telnyx.test/v2/texml/Accounts/${call.accountSid}/Calls/v3%3Aabc_DEF-1`,
    );
    expect(seen[0]!.init.method).toBe("POST");
    expect(new Headers(seen[0]!.init.headers).get("Authorization")).toBe(`Bearer ${call.apiKey}`);
    expect(seen[0]!.init.body).toBe("Texml=%3CResponse%2F%3E");
    expect(seen[0]!.init.signal).toBeInstanceOf(AbortSignal);
  });

  it("tells a refusal in Telnyx's words, never with the key; a timeout as one", async () => {
    const refused = await updateTexmlCall({ ...call, update: { Status: "completed" } }, async () =>
      Response.json(
        { errors: [{ code: "90018", detail: `Call has already ended ${call.apiKey}` }] },
        { status: 422 },
      ),
    );
    expect(refused).toEqual({
      ok: false,
      problem: "the carrier refused it with 422: Call has already ended [redacted] (90018)",
    });
    const late = await updateTexmlCall({ ...call, update: { Status: "completed" } }, async () => {
      throw new DOMException("timed out", "TimeoutError");
    });
    expect(late).toEqual({ ok: false, problem: "the carrier did not answer in time" });
  });

  it("never puts an id that is not one into a URL", async () => {
    expect(() => texmlCallPath(call.accountSid, "v3:../x")).toThrow(/CallSid/);
    expect(() => texmlCallPath("../x", call.callSid)).toThrow(/account/);
  });
});
