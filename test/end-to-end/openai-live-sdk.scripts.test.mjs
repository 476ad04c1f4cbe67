import OpenAI from "openai";
import { SidebandWS } from "openai/resources/live/sideband/ws";
import { LiveWS } from "openai/resources/live/ws";
import { beforeAll, describe, expect, it } from "vitest";
import { sharedGateway } from "../support/shared-gateway.mjs";

/**
 * The official `openai` package's GPT-Live WebSocket client (LiveWS, and its SidebandWS),
 * unchanged, against the simulator's GPT-Live face: the client builds
 * `{baseURL}/live/sessions` itself, so a baseURL of `{worker}/v1` reaches the face's route at
 * the service's own path, knobs in the baseURL's query. Against the scripts project's shared `wrangler dev`
 * (test/support/scripts-gateway-setup.mjs).
 */

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

describe("openai's LiveWS against the simulator's GPT-Live face", () => {
  let server;
  beforeAll(async () => {
    server = await sharedGateway();
  }, 160_000);

  const waitFor = async (pred, ms = 10_000) => {
    const until = Date.now() + ms;
    while (!pred() && Date.now() < until) await sleep(10);
    return pred();
  };
  /** Every server event a client saw, and its errors. */
  const watch = (client) => {
    const seen = { events: [], errors: [] };
    client.on("event", (e) => seen.events.push(e));
    client.on("error", (e) => seen.errors.push(e));
    return seen;
  };
  const said = (events) =>
    events
      .filter((e) => e.type === "session.output_transcript.delta")
      .map((e) => e.delta)
      .join("");
  const functionCalls = (events) =>
    events
      .filter((e) => e.type === "response.event" && e.event.type === "response.output_item.done")
      .map((e) => e.event.item)
      .filter((item) => item.type === "function_call");

  it("starts a session, answers a line with transcript and audio, runs a delegated call", async () => {
    const client = new OpenAI({
      apiKey: "sk-simulator-ignored",
      baseURL: `${server.base}/v1?seed=7&timeScale=0&repeatAnswers=1&calls=greeting:lookup_faq`,
    });
    const live = new LiveWS(client);
    const primary = watch(live);
    live.send({
      type: "session.start",
      session: {
        model: "gpt-live-1",
        instructions: "Be brief.",
        delegation: {
          type: "responses",
          responses: {
            model: "gpt-5.5",
            tools: [
              {
                type: "function",
                name: "lookup_faq",
                description: "Look an answer up in the FAQ.",
                parameters: { type: "object", properties: { question: { type: "string" } } },
                strict: true,
              },
            ],
          },
        },
      },
    });
    expect(await waitFor(() => primary.events.some((e) => e.type === "session.started"))).toBe(
      true,
    );
    const started = primary.events.find((e) => e.type === "session.started");
    expect(started.session).toMatchObject({ model: "gpt-live-1", status: "active" });

    // A sideband on the same session (never session.start there) sees the backend's events.
    const sideband = new SidebandWS(client, { session_id: started.session.id });
    const side = watch(sideband);
    await waitFor(() => sideband.socket.readyState === 1, 5000);

    live.send({
      type: "response.item.create",
      item: { type: "message", role: "user", content: [{ type: "input_text", text: "hours?" }] },
    });
    live.send({ type: "response.create" });
    expect(await waitFor(() => functionCalls(primary.events).length === 1)).toBe(true);
    const [call] = functionCalls(primary.events);
    expect(call.name).toBe("lookup_faq");
    expect(JSON.parse(call.arguments)).toEqual({ question: "hours?" });
    expect(await waitFor(() => functionCalls(side.events).length === 1, 5000)).toBe(true);

    live.send({
      type: "response.item.create",
      item: { type: "function_call_output", call_id: call.call_id, output: '{"hours":"9-5"}' },
    });
    live.send({ type: "response.create" });
    expect(await waitFor(() => said(primary.events).includes("lookup_faq found"))).toBe(true);
    await sleep(50);
    expect(said(primary.events)).toContain("Here is what lookup_faq found: the hours are 9-5.");
    const transcript = primary.events.filter((e) => e.type === "session.output_transcript.delta");
    expect(transcript.every((e) => e.end_ms > e.start_ms)).toBe(true);
    expect(primary.events.some((e) => e.type === "session.output_audio.delta")).toBe(true);
    expect(side.events.some((e) => e.type === "session.output_audio.delta" && e.end_ms > 0)).toBe(
      true,
    );

    live.send({ type: "session.close" });
    expect(await waitFor(() => primary.events.some((e) => e.type === "session.closed"))).toBe(true);
    expect(primary.errors).toEqual([]);
    expect(side.errors).toEqual([]);
    live.close();
    sideband.close();
  }, 30_000);

  it("creates a WebRTC session with client.live.create; a sideband attaches to its id", async () => {
    const client = new OpenAI({
      apiKey: "sk-simulator-ignored",
      baseURL: `${server.base}/v1?timeScale=0&utteranceMs=100&calls=*:lookup_faq`,
    });
    const created = await client.live.create({
      session: {
        model: "gpt-live-1",
        audio: { output: { voice: "marin" } },
        delegation: {
          type: "responses",
          responses: { model: "gpt-5.5", tools: [{ type: "function", name: "lookup_faq" }] },
        },
      },
      transport: { type: "webrtc", sdp: "v=0\r\ns=-\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n" },
    });
    expect(created.transport.type).toBe("webrtc");
    expect(created.transport.sdp).toMatch(/^v=0\r\n/);
    const sideband = new SidebandWS(client, { session_id: created.session.id });
    const side = watch(sideband);
    await waitFor(() => sideband.socket.readyState === 1, 5000);

    // The browser, stood in for by the face's /peer socket, says a line (100 ms of audio).
    const peer = new WebSocket(
      `${server.base.replace(/^http/, "ws")}/v1/live/sessions/${created.session.id}/peer`,
    );
    await new Promise((ok) => peer.addEventListener("open", ok, { once: true }));
    peer.send(
      JSON.stringify({
        type: "session.input_audio.append",
        audio: Buffer.alloc(4800).toString("base64"),
      }),
    );
    expect(await waitFor(() => functionCalls(side.events).length === 1, 5000)).toBe(true);
    expect(side.errors).toEqual([]);

    // What the SDK's types refuse, the face refuses: a WebSocket's audio format.
    await expect(
      client.live.create({
        session: { model: "gpt-live-1", audio: { format: { type: "audio/pcm", rate: 24000 } } },
        transport: { type: "webrtc", sdp: "v=0\r\nm=audio 9 RTP/AVP 0\r\n" },
      }),
    ).rejects.toMatchObject({ status: 400 });
    peer.close();
    sideband.close();
  }, 30_000);
});
