import { createRequire } from "node:module";
import {
  Behavior,
  FunctionResponseScheduling,
  GoogleGenAI,
  LiveServerMessage,
  Modality,
  Type,
} from "@google/genai";
import { beforeAll, describe, expect, it } from "vitest";
import { sharedGateway } from "../support/shared-gateway.mjs";

/**
 * The official @google/genai Live client against the simulator, unchanged: pointed at the
 * Worker by `httpOptions.baseUrl`, it opens /ws/…BidiGenerateContent itself; knobs ride in the
 * base URL's path (src/simulator/README.md). Every server message is checked as the
 * SDK parsed it (LiveServerMessage). Against the scripts project's shared `wrangler dev`.
 *
 * GENAI_SDK_DEBUG=1 prints the client frames the SDK sent (audio cut short).
 */

// A 2.x model: the simulator ends a turn right after its toolCall, as the service does (O1).
const MODEL = "gemini-2.5-flash-live-preview";
// Greeting without calls; the second user turn calls both tools; later turns none.
// Answer tags on: a reply said twice is found by its tag [#rN].
const KNOBS = "seed=7&timeScale=0&answerTags=1&calls=greeting:;set_preference,lookup_faq";

const TOOLS = [
  {
    functionDeclarations: [
      {
        name: "set_preference",
        description: "Remember a preference of the user (a side effect).",
        behavior: Behavior.NON_BLOCKING,
        parameters: {
          type: Type.OBJECT,
          properties: { key: { type: Type.STRING }, value: { type: Type.STRING } },
          required: ["key", "value"],
        },
      },
      {
        name: "lookup_faq",
        description: "Look an answer up in the FAQ (informational).",
        behavior: Behavior.BLOCKING,
        parameters: {
          type: Type.OBJECT,
          properties: { question: { type: Type.STRING } },
          required: ["question"],
        },
      },
    ],
  },
];

const config = (extra = {}) => ({
  responseModalities: [Modality.AUDIO],
  outputAudioTranscription: {},
  sessionResumption: {},
  tools: TOOLS,
  ...extra,
});

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

// What the SDK writes on its socket, seen at the `ws` it uses itself (observation only).
const sent = [];
{
  const { WebSocket } = createRequire(import.meta.resolve("@google/genai"))("ws");
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data, ...rest) {
    if (typeof data === "string") sent.push(data);
    return send.call(this, data, ...rest);
  };
}
const debug = (label, value) => {
  if (process.env.GENAI_SDK_DEBUG) console.log(`[genai-sdk] ${label}:`, value);
};

/** One Live session of the SDK and every message its callbacks got. */
class Live {
  messages = [];
  errors = [];
  closeEvent = null;

  static async connect(ai, cfg) {
    const live = new Live();
    const first = sent.length;
    live.session = await ai.live.connect({
      model: MODEL,
      config: cfg,
      callbacks: {
        onmessage: (msg) => live.messages.push(msg),
        onerror: (e) => live.errors.push(e),
        onclose: (e) => {
          live.closeEvent = { code: e.code, reason: e.reason };
        },
      },
    });
    live.setupSent = sent.slice(first).find((f) => f.includes('"setup"'));
    return live;
  }

  /** Index of the next message to arrive. */
  mark() {
    return this.messages.length;
  }

  /** Index of the first message at or after `from` that `pred` accepts. */
  async waitFor(pred, what, from, ms = 5000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const i = this.messages.findIndex((m, j) => j >= from && pred(m));
      if (i !== -1) return i;
      if (this.closeEvent !== null) {
        throw new Error(`closed ${JSON.stringify(this.closeEvent)} while waiting for ${what}`);
      }
      if (Date.now() > deadline) {
        const got = this.messages.slice(from).map((m) => Object.keys(m).join("+"));
        throw new Error(`no ${what} within ${ms} ms; got ${JSON.stringify(got)}`);
      }
      await sleep(5);
    }
  }

  /** Messages from `from` up to and including the next turnComplete. */
  async turn(from) {
    const end = await this.waitFor(isTurnComplete, "turnComplete", from);
    return this.messages.slice(from, end + 1);
  }

  /** The sessionResumptionUpdate that follows the message at `after`. */
  async resumptionAfter(after) {
    const i = await this.waitFor(
      (m) => m.sessionResumptionUpdate !== undefined,
      "sessionResumptionUpdate",
      after + 1,
    );
    return this.messages[i].sessionResumptionUpdate;
  }

  async close() {
    this.session.close();
    const deadline = Date.now() + 5000;
    while (this.closeEvent === null && Date.now() < deadline) await sleep(5);
  }
}

const isTurnComplete = (m) => m.serverContent?.turnComplete === true;
const count = (msgs, pred) => msgs.filter(pred).length;
const transcript = (msgs) =>
  msgs.map((m) => m.serverContent?.outputTranscription?.text ?? "").join("");

/** The model's audio in `msgs`: its parts' mime types and the PCM bytes (via the SDK's `data`). */
function audioOf(msgs) {
  const turns = msgs.filter((m) => m.serverContent?.modelTurn !== undefined);
  return {
    mimeTypes: [
      ...new Set(
        turns.flatMap((m) => m.serverContent.modelTurn.parts.map((p) => p.inlineData?.mimeType)),
      ),
    ],
    bytes: turns.reduce((n, m) => n + Buffer.from(m.data ?? "", "base64").length, 0),
  };
}

/** Checks every message of a reply the way a client reads them; returns its transcript. */
function expectSpokenReply(msgs) {
  for (const m of msgs) expect(m).toBeInstanceOf(LiveServerMessage);
  const audio = audioOf(msgs);
  expect(audio.mimeTypes).toEqual(["audio/pcm;rate=24000"]);
  expect(audio.bytes).toBeGreaterThan(0);
  expect(audio.bytes % 2).toBe(0);
  const last = msgs.at(-1);
  expect(last.serverContent.turnComplete).toBe(true);
  expect(count(msgs, isTurnComplete)).toBe(1);
  // generationComplete just before turnComplete; usage rides on the turnComplete frame.
  expect(msgs.at(-2)?.serverContent?.generationComplete).toBe(true);
  const usage = last.usageMetadata;
  expect(usage.responseTokenCount).toBeGreaterThan(0);
  expect(usage.totalTokenCount).toBe(usage.promptTokenCount + usage.responseTokenCount);
  expect(usage.responseTokensDetails).toEqual([
    { modality: "AUDIO", tokenCount: usage.responseTokenCount },
  ]);
  return transcript(msgs);
}

/** One second of a 440 Hz tone, 16 kHz PCM16 LE, in 100 ms base64 chunks. */
function micChunks() {
  const pcm = Buffer.alloc(16000 * 2);
  for (let i = 0; i < 16000; i++) {
    pcm.writeInt16LE(Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / 16000)), i * 2);
  }
  const chunks = [];
  for (let off = 0; off < pcm.length; off += 3200) {
    chunks.push(pcm.subarray(off, off + 3200).toString("base64"));
  }
  return chunks;
}

const userTurn = (text) => ({ turns: [{ role: "user", parts: [{ text }] }], turnComplete: true });

/** Greeting turn; returns the handle issued after it. */
async function greeting(live) {
  const from = live.mark();
  live.session.sendClientContent(userTurn("Hi"));
  const msgs = await live.turn(from);
  // "resumable: false while the model generates", then the reply.
  expect(msgs[0].sessionResumptionUpdate).toEqual({ resumable: false });
  expect(count(msgs, (m) => m.toolCall !== undefined)).toBe(0);
  const said = expectSpokenReply(msgs);
  expect(said).toMatch(/^Hello! I'm the liveline simulator, standing in for a live model\./);
  expect(said).toMatch(/\[#r1\]$/);
  return live.resumptionAfter(from + msgs.length - 1);
}

const TOOL_TURN = "Please remember that I like jazz, and look up the FAQ about opening hours.";

/**
 * The tool turn as a 2.x model plays it: the reply, both calls in one toolCall, and the turn's
 * end at once (nothing waited for, O1). The BLOCKING lookup's result, arriving after that, is
 * new input: spoken once in a reply of its own; set_preference is still pending then.
 */
async function toolTurn(live) {
  const from = live.mark();
  live.session.sendClientContent(userTurn(TOOL_TURN));
  const at = await live.waitFor((m) => m.toolCall !== undefined, "toolCall", from);
  const calls = live.messages[at].toolCall.functionCalls;
  expect(calls.map((c) => c.name)).toEqual(["set_preference", "lookup_faq"]);
  for (const c of calls) expect(c.id).toMatch(/^function-call-\d+$/);
  expect(new Set(calls.map((c) => c.id)).size).toBe(2);
  expect(Object.keys(calls[0].args).sort()).toEqual(["key", "value"]);
  expect(calls[1].args).toEqual({ question: TOOL_TURN });
  // The preference drawn from the words, not the whole line.
  expect(calls[0].args).toEqual({ key: "preference", value: "jazz" });
  expect(transcript(live.messages.slice(from, at))).toContain(`You said: “${TOOL_TURN}”`);
  const [preference, faq] = calls;

  // generationComplete and turnComplete follow the toolCall at once.
  const ended = await live.turn(from);
  expect(ended.at(-3)?.toolCall).toBeDefined();
  expectSpokenReply(ended);

  const resumed = live.mark();
  live.session.sendToolResponse({
    functionResponses: [{ id: faq.id, name: faq.name, response: { output: "We open at 9." } }],
  });
  const msgs = await live.turn(resumed);
  const said = expectSpokenReply(msgs);
  expect(said).toContain("Here is what lookup_faq found: We open at 9.");
  expect(said).not.toContain("set_preference");
  // A call is still pending: no handle yet.
  const update = await live.resumptionAfter(resumed + msgs.length - 1);
  expect(update).toEqual({ resumable: false });
  return { preference, said };
}

/**
 * Streams a second of audio and ends the stream. Returns what came from `from` until the
 * speech's transcription (`before`), that transcription, and the reply to the speech.
 */
async function speak(live, from) {
  for (const data of micChunks()) {
    live.session.sendRealtimeInput({ audio: { data, mimeType: "audio/pcm;rate=16000" } });
  }
  live.session.sendRealtimeInput({ audioStreamEnd: true });
  const heard = await live.waitFor(
    (m) => m.serverContent?.inputTranscription !== undefined,
    "inputTranscription",
    from,
  );
  const reply = await live.turn(heard + 1);
  return {
    before: live.messages.slice(from, heard),
    heard: live.messages[heard].serverContent.inputTranscription,
    reply,
  };
}

describe("@google/genai Live client against the simulator", () => {
  let server;
  let baseUrl;
  let handle;
  let lastReply;

  beforeAll(async () => {
    // The scripts project's shared wrangler dev (test/support/scripts-gateway-setup.mjs).
    server = await sharedGateway();
    baseUrl = `${server.base}/simulator/gemini/${KNOBS}`;
  }, 160_000);

  const sdk = () => new GoogleGenAI({ apiKey: "sim-key-ignored", httpOptions: { baseUrl } });

  it("runs greeting, tool, audio turns and the SILENT result through the SDK", async () => {
    const live = await Live.connect(sdk(), config());
    debug("setup sent", live.setupSent);
    const setup = JSON.parse(live.setupSent).setup;
    expect(setup.model).toBe(`models/${MODEL}`);
    expect(live.messages[0]).toBeInstanceOf(LiveServerMessage);
    expect(live.messages[0].setupComplete).toEqual({});

    const first = await greeting(live);
    expect(first.resumable).toBe(true);
    expect(first.newHandle).toMatch(/^[\w-]+:[\w-]+:1$/);

    const { preference } = await toolTurn(live);

    // The side effect's result arrives after its reply ended, SILENT: context only. Then the
    // user speaks. Were it taken as new input, the model would say its reply again before
    // the transcription of the speech (timeScale=0: all at once, in order).
    const from = live.mark();
    live.session.sendToolResponse({
      functionResponses: [
        {
          id: preference.id,
          name: preference.name,
          response: { output: "saved" },
          scheduling: FunctionResponseScheduling.SILENT,
        },
      ],
    });
    debug("SILENT response sent", sent.at(-1));
    const { before, heard, reply } = await speak(live, from);
    expect(before).toEqual([]);
    expect(heard).toEqual({ text: "What can you do?", finished: true });
    const said = expectSpokenReply(reply);
    expect(said).toContain("You said: “What can you do?”");
    lastReply = said;

    // Idle with nothing pending (the SILENT result answered the call): a handle.
    const update = await live.resumptionAfter(live.messages.indexOf(reply.at(-1)));
    expect(update.resumable).toBe(true);
    expect(update.newHandle).toMatch(/^[\w-]+:[\w-]+:2$/);
    handle = update.newHandle;

    expect(live.errors).toEqual([]);
    expect(live.closeEvent).toBeNull();
    await live.close();
    // The SDK closes without a status code (1005); anything else came from the server.
    expect([1000, 1005]).toContain(live.closeEvent?.code);
  });

  it("resumes from the handle on a new connection, with the conversation restored", async () => {
    expect(handle, "a handle from the first test").toBeDefined();
    const live = await Live.connect(sdk(), config({ sessionResumption: { handle } }));
    expect(JSON.parse(live.setupSent).setup.sessionResumption).toEqual({ handle });
    expect(live.messages[0]).toBeInstanceOf(LiveServerMessage);
    expect(live.messages[0].setupComplete).toEqual({});

    const from = live.mark();
    live.session.sendClientContent(userTurn("What did you just say?"));
    const said = expectSpokenReply(await live.turn(from));
    expect(said).toContain(`I said: ${lastReply.trim()}`);
    expect(live.closeEvent).toBeNull();
    await live.close();
  });

  it("control: the same late result without SILENT makes the model say its reply again", async () => {
    const live = await Live.connect(sdk(), config());
    await greeting(live);
    const { preference, said: toolReply } = await toolTurn(live);
    const from = live.mark();
    live.session.sendToolResponse({
      functionResponses: [
        { id: preference.id, name: preference.name, response: { output: "saved" } },
      ],
    });
    const { before, reply } = await speak(live, from);
    expect(count(before, isTurnComplete)).toBe(1);
    expect(transcript(before)).toBe(toolReply);
    expectSpokenReply(reply);
    await live.close();
  });

  it("answers at a bare-origin base URL too, for the SDK's API versions", async () => {
    // No knobs: every one at its default (paced replies), so only the setup is exchanged.
    for (const apiVersion of [undefined, "v1beta", "v1alpha"]) {
      const ai = new GoogleGenAI({
        apiKey: "sim-key-ignored",
        httpOptions: { baseUrl: server.base, ...(apiVersion && { apiVersion }) },
      });
      const live = await Live.connect(ai, config());
      expect(live.messages[0].setupComplete, apiVersion).toEqual({});
      await live.close();
      expect([1000, 1005], apiVersion).toContain(live.closeEvent?.code);
    }
  });

  it("refuses a bad knob in the base URL (the upgrade answers 400)", async () => {
    const ai = new GoogleGenAI({
      apiKey: "sim-key-ignored",
      httpOptions: { baseUrl: `${server.base}/simulator/gemini/race=7` },
    });
    await expect(Live.connect(ai, config())).rejects.toThrow(/400/);
  });
});
