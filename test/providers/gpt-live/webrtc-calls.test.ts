// GPT-Live's WebRTC creation as liveline makes it (providers/gpt-live/webrtc-calls.ts): the
// request is the SDK's `client.live.create` (its types checked at compile time below), the
// URLs come from GPT_LIVE_URL, and the server's key never reaches an answer or an error.
import type {
  LiveCreateParams as SdkCreateParams,
  LiveCreateResponse as SdkCreateResponse,
} from "openai/resources/live/live";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { DirectCallRefused } from "../../../src/providers/direct-call-refused.js";
import { GptLiveAdapter } from "../../../src/providers/gpt-live/adapter.js";
import {
  attachUrl,
  createUrl,
  gptLiveCalls,
  mediaSessionOf,
} from "../../../src/providers/gpt-live/webrtc-calls.js";
import {
  LiveCreateParams,
  LiveCreateResponse,
} from "../../../src/providers/gpt-live/webrtc-schemas.js";
import type { RebuiltContext } from "../../../src/vocabulary/model.js";

const KEY = "sk-test-secret-key";
const OFFER = "v=0\r\ns=-\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n";
const LIVE_URL = "wss://api.openai.com/v1/live/sessions";

const adapter = () =>
  new GptLiveAdapter({
    model: "gpt-live-1",
    backendModel: "gpt-5-mini",
    agent: {
      systemInstruction: "Be brief.",
      voice: "marin",
      tools: [{ name: "lookup_faq", description: "FAQ", args: z.object({}), followUp: "speak" }],
    },
  });

const context: RebuiltContext = {
  items: [
    { role: "user", text: "hi" },
    { role: "model", text: "Hello!" },
  ],
};

/** A fake service: records each request, answers with `answer`. */
function service(answer: () => Response | Promise<Response>) {
  const requests: Request[] = [];
  const opened: string[] = [];
  const calls = gptLiveCalls({
    liveUrl: LIVE_URL,
    headers: { Authorization: `Bearer ${KEY}` },
    fetch: async (request) => {
      requests.push(request);
      return answer();
    },
    openSocket: async (url) => {
      opened.push(url);
      throw new Error("no socket in this test");
    },
    adapter,
  });
  return { calls, requests, opened };
}

describe("the URLs of a direct call", () => {
  it("creates at the WebSocket's own path over HTTPS, and attaches below it", () => {
    expect(createUrl(LIVE_URL)).toBe("https://api.openai.com/v1/live/sessions");
    expect(attachUrl(LIVE_URL, "sess_1")).toBe(
      "wss://api.openai.com/v1/live/sessions/sess_1/attach",
    );
    // The id is one path segment, encoded as the SDK does; a trailing slash is no segment.
    expect(attachUrl("ws://127.0.0.1:9/v1/live/sessions/?x=1", "a/b c")).toBe(
      "ws://127.0.0.1:9/v1/live/sessions/a%2Fb%20c/attach?x=1",
    );
  });
});

describe("the call's session", () => {
  it("is the adapter's session.start without the audio format (the media negotiates it)", () => {
    const a = adapter();
    a.encodeContext(context);
    const session = mediaSessionOf(a.setupFrame({ seeded: true }));
    expect(session.audio).toEqual({ output: { voice: "marin" } });
    expect(session.instructions).toBe("Be brief.");
    expect(session.delegation?.type).toBe("responses");
    expect(session.input).toHaveLength(2);
    expect(() =>
      LiveCreateParams.parse({ session, transport: { type: "webrtc", sdp: OFFER } }),
    ).not.toThrow();
  });

  it("a WebSocket's audio format is refused in a creation (strict, as the service is)", () => {
    const body = {
      session: { model: "gpt-live-1", audio: { format: { type: "audio/pcm", rate: 24000 } } },
      transport: { type: "webrtc", sdp: OFFER },
    };
    expect(LiveCreateParams.safeParse(body).success).toBe(false);
  });
});

describe("creating a call", () => {
  it("posts the SDK's request with the server's key and reads its answer", async () => {
    const { calls, requests } = service(() =>
      Response.json({
        session: { id: "sess_42" },
        transport: { type: "webrtc", sdp: "v=0 answer" },
      }),
    );
    const call = await calls.create(OFFER, context);
    expect(call).toEqual({ serviceSessionId: "sess_42", sdp: "v=0 answer" });
    const [request] = requests;
    expect(request?.method).toBe("POST");
    expect(request?.url).toBe("https://api.openai.com/v1/live/sessions");
    expect(request?.headers.get("Authorization")).toBe(`Bearer ${KEY}`);
    const body = LiveCreateParams.parse(await request!.json());
    expect(body.transport).toEqual({ type: "webrtc", sdp: OFFER });
    expect(JSON.stringify(body)).not.toContain(KEY);
    // The shapes are the SDK's: these assignments fail to compile when they part.
    const sdkBody: SdkCreateParams = body;
    const sdkAnswer: SdkCreateResponse = LiveCreateResponse.parse({
      session: { id: "x" },
      transport: { type: "webrtc", sdp: "v=0" },
    });
    expect(sdkBody.session.model).toBe("gpt-live-1");
    expect(sdkAnswer.session.id).toBe("x");
  });

  it("a refused offer is the device's (400), in the service's words, the key blanked", async () => {
    const { calls } = service(() =>
      Response.json(
        { error: { message: `Invalid SDP offer (key ${KEY})`, code: "invalid_offer" } },
        { status: 400 },
      ),
    );
    const refused = await calls.create(OFFER, context).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DirectCallRefused);
    const err = refused as DirectCallRefused;
    expect(err.offerRefused).toBe(true);
    expect(err.message).toContain("Invalid SDP offer");
    expect(err.message).not.toContain(KEY);
  });

  it("a refused key, an unreachable service, or an answer that is no session: not the device's", async () => {
    const denied = service(() => Response.json({ error: { message: "bad key" } }, { status: 401 }));
    const e1 = (await denied.calls
      .create(OFFER, context)
      .catch((e: unknown) => e)) as DirectCallRefused;
    expect([e1.status, e1.offerRefused]).toEqual([401, false]);
    const down = service(() => Promise.reject(new Error(`connect failed ${KEY}`)));
    const e2 = (await down.calls
      .create(OFFER, context)
      .catch((e: unknown) => e)) as DirectCallRefused;
    expect([e2.status, e2.offerRefused]).toEqual([0, false]);
    expect(e2.message).not.toContain(KEY);
    const odd = service(() => Response.json({ sdp: "v=0" }));
    const e3 = (await odd.calls
      .create(OFFER, context)
      .catch((e: unknown) => e)) as DirectCallRefused;
    expect(e3).toBeInstanceOf(DirectCallRefused);
    expect(e3.offerRefused).toBe(false);
  });

  it("attaches its sideband at the call's id", async () => {
    const { calls, opened } = service(() => new Response(null, { status: 500 }));
    await expect(calls.attach("sess_42")).rejects.toThrow("no socket");
    expect(opened).toEqual(["wss://api.openai.com/v1/live/sessions/sess_42/attach"]);
  });
});
