/**
 * The GPT-Live adapter: one object per connection, turning server events into ModelEvents and
 * ModelCommands into client events (OpenAI's GPT-Live guides; the live types of the `openai` npm package).
 *
 * GPT-Live has no turns: nothing marks the end of what the model says, and nothing can be
 * cancelled or truncated. What the wire does say is where each piece of speech sits on one
 * session timeline (`start_ms`/`end_ms` of both transcripts). So an utterance of the model
 * ends here where the user's speech begins after it on that timeline (`turn_complete`,
 * reason `yielded`); an utterance nobody speaks after ends when the model stays quiet (the
 * core's rule for turnless models, see core/watchdog.ts).
 *
 * The voice model calls no tools: it delegates to a Responses backend, whose function calls
 * arrive nested in `response.event`. A call id is handed to the core once, however often it
 * is delivered (the service's guides leave duplicate delivery to the application); results
 * go back as `function_call_output` items. The backend is one response chain for the session:
 * when a `response.create` may go, and which response answers it, is the ReplyGate's
 * (response-chain.ts).
 */

import { pcmResampler } from "../../audio/transcode.js";
import type {
  ModelCapabilities,
  ModelCommand,
  ModelEvent,
  RebuiltContext,
  ToolCallRequest,
  ToolResponse,
} from "../../vocabulary/model.js";
import { type ContextItem, cancelledReasonOf } from "../../vocabulary/model.js";
import type {
  AgentSpec,
  AudioEncoding,
  CloseClass,
  DecodeResult,
  ProviderAdapter,
} from "../../vocabulary/provider-adapter.js";
import { base64ToBytes, bytesToBase64 } from "../base64.js";
import { argumentsOf, parametersOf } from "../function-tools.js";
import type { ReplyGate } from "./reply-gate.js";
import { ResponseChain } from "./response-chain.js";
import {
  BackendUsage,
  functionCallOf,
  type InitialItem,
  LiveClientEvent,
  type LiveServerEvent,
  type ResponseStreamEvent,
  readServerEvent,
} from "./schemas.js";

/** The delegation key of a backend response no delegation names (a typed line's, say). */
const NO_DELEGATION = "";
/** The nested events that end a Responses stream: its calls are all known then. */
const RESPONSE_ENDS = new Set(["response.completed", "response.failed", "response.incomplete"]);

/**
 * The voice goes on talking while its backend works: calls never block it. A backend
 * response continues on `response.create` once every call it made has its output, and
 * appending an output alone does not continue it: a SILENT result is appended only (it is
 * context for what comes next, and prompts nothing), unless its turn is still open (then it
 * lets the reply go on, WHEN_IDLE: see core/tools.ts). The model speaks of its own accord and
 * yields by itself: no turn ends on the wire (`turnless`). Every response liveline asks for
 * answers results or a line it sent, and a late result is never sent: no regeneration
 * exists to judge by its words.
 */
export const GPT_LIVE_CAPABILITIES: ModelCapabilities = {
  nonBlockingCalls: true,
  resultScheduling: true,
  turnCompleteWaitsForResults: false,
  silentHonoured: true,
  responsesOnRequest: true,
  turnless: true,
  answersCancelledCalls: true,
};

/** What a session.start may seed: at most 128 messages (GPT-LIVE.md, Session config). */
export const MAX_SEED_MESSAGES = 128;
/** And at most 8,192 tokens; counted here as a quarter of the characters, rounded up. */
export const MAX_SEED_TOKENS = 8192;

export interface GptLiveAdapterOptions {
  model: string;
  /** The Responses model that runs the delegated work (its function calls). */
  backendModel: string;
  agent: AgentSpec;
  /** g711_ulaw: audio/pcmu both ways, untouched (a phone call's). Default pcm16. */
  audio?: AudioEncoding | undefined;
  /**
   * A call id delivered again is nothing (default true). False only for the naive relay
   * (scripts/measurement), which hands on every delivery as the frameworks in the field do.
   */
  dedupeCalls?: boolean | undefined;
  /**
   * When to ask for a response and whose each is (default: the session's one chain,
   * response-chain.ts). Another only for a measurement arm (scripts/measurement).
   */
  gate?: ReplyGate | undefined;
  /**
   * How a call liveline cancelled is told to the backend: as cancelled, not to be spoken of
   * (default), or as the error it was before issue 52 (`{"error":"cancelled: …"}`), which the
   * backend reads out; the latter only for a measurement arm or a control.
   */
  cancelledOutput?: "cancelled" | "error" | undefined;
}

export class GptLiveAdapter implements ProviderAdapter {
  readonly capabilities = GPT_LIVE_CAPABILITIES;
  /** Server events of types liveline does not read (never fatal). */
  ignored = 0;
  /** Seed messages left out to fit the service's limits (newest kept). */
  seedDropped = 0;
  private live = false;
  private seed: InitialItem[] = [];
  /** Call ids handed to the core: a second delivery of one is nothing. */
  private readonly calls = new Set<string>();
  /** Function calls of backend responses still streaming, by delegation. */
  private readonly backendCalls = new Map<string, ToolCallRequest[]>();
  /** When a request may go, and whose each backend response is. */
  private readonly gate: ReplyGate;
  /**
   * Backend responses liveline asked for (by delegation key) that have not ended, with the
   * turn each answers and whether its first output showed (`reply_ready` said once).
   */
  /** The turn of the reply each call came in, where liveline asked for that reply. */
  private readonly callTurns = new Map<string, string | undefined>();
  private readonly replies = new Map<
    string,
    { turnId: string | undefined; shown: boolean; words: boolean; chars: number }
  >();
  /**
   * The words of the replies liveline asked for, as the voice says them: how much of their
   * text the transcript has not said yet (letters and digits), and how many of them have not
   * ended. Once all of it is said and they all ended, what the voice says next is another
   * utterance (its own).
   */
  private readonly saying = { left: 0, open: 0, counted: false };
  /** The model has said something since the last boundary on the timeline. */
  private modelSpoke = false;
  /** Where the model's speech ends on the session timeline (ms). */
  private outputEndMs = 0;
  /** The user is speaking (input transcript since the model last spoke). */
  private userSpeaking = false;
  /** The session's metered seconds so far, as last reported (cumulative, per connection). */
  private meteredSeconds = 0;
  private readonly mulaw: boolean;
  /**
   * The voice's 16 kHz PCM raised to the clients' 24 kHz (null on μ-law): its audio is one
   * timeline, so one stream per connection, the filter's history kept across chunks.
   */
  private readonly outputTo24k: ((pcm: Uint8Array) => Uint8Array) | null;

  constructor(private readonly opts: GptLiveAdapterOptions) {
    this.mulaw = opts.audio === "g711_ulaw";
    this.outputTo24k = this.mulaw ? null : pcmResampler(16000, 24000);
    this.gate = opts.gate ?? new ResponseChain();
  }

  /** Every connection starts a session; a seed rides in its `input` (see encodeContext). */
  setupFrame(_opts: { resumeHandle?: string | undefined; seeded: boolean }): string {
    const { agent } = this.opts;
    // Clients speak 16 kHz PCM, which the service takes as it is (bluejay-ai-dev/mivas-bench
    // PR #56); one format both ways, so its voice comes at 16 kHz too (raised to 24 kHz here).
    const format = this.mulaw
      ? ({ type: "audio/pcmu", rate: 8000 } as const)
      : ({ type: "audio/pcm", rate: 16000 } as const);
    return wire({
      type: "session.start",
      session: {
        model: this.opts.model,
        instructions: agent.systemInstruction,
        audio: agent.voice === undefined ? { format } : { format, output: { voice: agent.voice } },
        delegation: this.delegation(),
        ...(this.seed.length > 0 ? { input: this.seed } : {}),
      },
    });
  }

  /**
   * A direct call's sideband attached: the call takes this agent's tools (the delegation, the
   * one setting a running session lets change). After a handoff, the agent's instructions are
   * appended too (instructions and voice are fixed once the call started: its voice stays).
   */
  attachFrames({ handedOff }: { handedOff: boolean }): string[] {
    const update = wire({ type: "session.update", session: { delegation: this.delegation() } });
    if (!handedOff) return [update];
    const content = fitAppend(
      `From now on, follow these instructions instead of any before them:\n${this.opts.agent.systemInstruction}`,
    );
    return [update, wire({ type: "session.instructions.append", content, delegation_id: null })];
  }

  /** Delegated work goes to the Responses backend, with the agent's tools. */
  private delegation() {
    return {
      type: "responses" as const,
      responses: {
        model: this.opts.backendModel,
        tools: this.opts.agent.tools.map((tool) => ({
          type: "function" as const,
          name: tool.name,
          description: tool.description,
          parameters: parametersOf(tool),
        })),
      },
    };
  }

  decode(frame: string | ArrayBuffer | Uint8Array): DecodeResult {
    const text = typeof frame === "string" ? frame : new TextDecoder().decode(frame);
    const read = readServerEvent(text);
    if (!read.ok) return protocolError(read.problem);
    const event = read.message;
    if (event.type === "unknown") {
      this.ignored++;
      return ok([]);
    }
    const decoded = this.onServerEvent(event);
    if (!decoded.ok) return decoded;
    // A request the gate held may go now (a response ended, a refusal was answered).
    const send = [...(decoded.send ?? []), ...this.requests()];
    return send.length > 0 ? { ...decoded, send } : decoded;
  }

  private onServerEvent(event: LiveServerEvent): DecodeResult {
    switch (event.type) {
      case "session.started":
        if (this.live) return ok([]);
        this.live = true;
        return ok([{ type: "setup_complete" }]);
      case "session.output_audio.delta": {
        let audio: Uint8Array;
        try {
          audio = base64ToBytes(event.delta);
        } catch {
          return protocolError("session.output_audio.delta: audio that is not base64");
        }
        const pcm = this.outputTo24k === null ? audio : this.outputTo24k(audio);
        // A chunk's audio comes before its transcript (assumed, as the face sends them).
        return ok([...this.replySaid(), ...this.modelSpeaks(), { type: "audio_delta", pcm }]);
      }
      case "session.output_transcript.delta": {
        this.outputEndMs = Math.max(this.outputEndMs, event.end_ms);
        const said = this.replySaid();
        if (this.saying.counted) this.saying.left -= spokenLength(event.delta);
        return ok([
          ...said,
          ...this.modelSpeaks(),
          {
            type: "transcript_delta",
            text: event.delta,
            span: { startMs: event.start_ms, endMs: event.end_ms },
          },
        ]);
      }
      case "session.input_transcript.delta":
        return ok(this.userSays(event.delta, event.start_ms));
      case "session.delegation.created":
        // The backend starts on it: the model works on an answer, it is not silent. Whether it
        // is the voice's own doing or announces the reply to liveline's request, the gate knows.
        this.gate.delegation(event.delegation.id, event.delegation.target, event.client_event_id);
        return ok([
          { type: "delegation", id: event.delegation.id, target: event.delegation.target },
        ]);
      case "response.event":
        return ok(
          this.onBackendEvent(
            event.event,
            event.delegation_id ?? NO_DELEGATION,
            event.client_event_id,
          ),
        );
      case "error":
        return this.onError(event.error, event.client_event_id);
      case "session.closed": {
        // The service ends the session (expired, moderation, a hang-up): the socket's close
        // follows, and the core reconnects or gives up by its close code. An expiry (two
        // hours) loses nothing: the core carries the session to a new one when it is needed.
        const events: ModelEvent[] = [
          ...this.metered(event.usage.seconds),
          { type: "service_error", code: `session_closed:${event.reason}`, message: event.reason },
        ];
        if (event.reason === "expired")
          events.push({
            type: "upstream_closed",
            code: 1000,
            reason: "expired",
            fatal: false,
            expired: true,
          });
        return ok(events);
      }
      case "session.usage.updated":
        return ok(this.metered(event.usage.seconds));
      case "session.updated":
      case "session.input_audio.muted":
      case "session.input_audio.unmuted":
      case "session.instructions.appended":
      case "session.thinking.appended":
      case "session.commentary.appended":
      case "info":
        return ok([]);
      default: {
        const unreachable: never = event;
        throw new Error(`unknown server event ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * A backend response's event. Its function calls are handed on together when it ends: the
   * backend continues only once every call of the session has its output, so they are one
   * batch to the core (whose results go back together). A failed response's calls were
   * dropped by the service: handed on closed (`dropped`), never run.
   */
  private onBackendEvent(
    event: ResponseStreamEvent,
    key: string,
    clientEventId: string | undefined,
  ): ModelEvent[] {
    if (event.type === "response.created") {
      const owner = this.gate.started(key, responseIdOf(event), clientEventId);
      if ("duplicate" in owner) return [];
      if (owner.asked)
        this.replies.set(key, { turnId: owner.turnId, shown: false, words: false, chars: 0 });
      return [{ type: "working" }];
    }
    // Its first output: the voice says it from here (before its calls, which are its turn's).
    const ready: ModelEvent[] = [];
    const reply = this.replies.get(key);
    const ends = RESPONSE_ENDS.has(event.type);
    if (
      reply !== undefined &&
      !reply.shown &&
      (event.type === "response.output_text.delta" || ends)
    ) {
      reply.shown = true;
      const words = event.type === "response.output_text.delta";
      ready.push({ type: "reply_ready", turnId: reply.turnId, words });
    }
    if (reply !== undefined && event.type === "response.output_text.delta" && "delta" in event) {
      // Its words: the voice says them from here, after any it is still saying.
      if (!reply.words) this.saying.open++;
      reply.words = true;
      this.saying.counted = true;
      const chars = spokenLength(event.delta);
      reply.chars += chars;
      this.saying.left += chars;
    }
    const call = functionCallOf(event);
    if (call !== null) {
      // Delivered twice (or on another connection of the session): one call.
      if (this.opts.dedupeCalls !== false) {
        if (this.calls.has(call.call_id)) return ready;
        this.calls.add(call.call_id);
      }
      this.gate.delivered(key, call.call_id);
      // The turn of the reply it came in: what its output asks for answers that turn.
      if (reply !== undefined) this.callTurns.set(call.call_id, reply.turnId);
      const calls = this.backendCalls.get(key) ?? [];
      calls.push({ id: call.call_id, name: call.name, args: argumentsOf(call.arguments) });
      this.backendCalls.set(key, calls);
      return ready;
    }
    if (!ends || !("response" in event)) return ready;
    const failed = event.type !== "response.completed";
    const { dropped, duplicate } = this.gate.ended(key, responseIdOf(event), failed);
    const calls = this.backendCalls.get(key) ?? [];
    this.backendCalls.delete(key);
    if (duplicate) return [];
    const out: ModelEvent[] = [...ready, ...backendUsageOf(event)];
    const run = calls.filter((c) => !dropped.includes(c.id));
    const gone = calls.filter((c) => dropped.includes(c.id));
    if (run.length > 0) out.push({ type: "tool_call", calls: run });
    // The service discards a failed response's calls and refuses their outputs: closed in
    // the record, with the reason, and never run (livekit/agents PR #7266).
    if (gone.length > 0) out.push({ type: "tool_call", calls: gone, dropped: "response_failed" });
    if (failed)
      out.push({ type: "service_error", code: `response_${event.type.slice(9)}`, message: key });
    // A reply liveline asked for is over after its calls (the core waits on those next).
    if (reply !== undefined) {
      this.replies.delete(key);
      out.push({ type: "reply_done" });
      if (reply.words) this.saying.open--;
      // A failed reply's words are not said (assumed): nothing of it is still to be heard.
      if (failed && reply.words) this.saying.left -= reply.chars;
      // With no words and no call to wait on, nothing of it is to be heard: its utterance is
      // over (an empty reply, or a failed one), and what the voice says next is not it.
      if ((!reply.words || failed) && run.length === 0)
        out.push({ type: "turn_complete", reason: "empty_reply" });
    }
    return out;
  }

  /**
   * An `error`: said as a timeline row, and the connection stays. One that refuses
   * liveline's request in flight is the gate's: asked again once the calls it names have
   * outputs (those liveline never heard of are answered here, as cancelled), or, refused for
   * another reason, its turn is told no reply comes.
   */
  private onError(
    error: { code: string; message: string; client_event_id?: string | undefined },
    eventClientId: string | undefined,
  ): DecodeResult {
    const events: ModelEvent[] = [
      {
        type: "service_error",
        code: error.code,
        message: error.message.slice(0, SERVICE_ERROR_MESSAGE_CHARS),
      },
    ];
    const refusal = this.gate.refused(
      error.client_event_id ?? eventClientId,
      error.code,
      error.message,
    );
    if (refusal === null) return ok(events);
    const send = refusal.unknownCalls.map((callId) =>
      outputItem(callId, JSON.stringify(cancelledOutput("unknown_call"))),
    );
    if (refusal.gaveUp !== null) {
      events.push({ type: "reply_ready", turnId: refusal.gaveUp.turnId, words: false });
      events.push({ type: "reply_done" });
    }
    return { ok: true, events, send };
  }

  /**
   * The session's cumulative seconds (never to be added up across updates): what they grew by
   * since the last report is this connection's usage to record. A new connection is a new
   * service session, counting from 0.
   */
  private metered(cumulative: number): ModelEvent[] {
    const seconds = cumulative - this.meteredSeconds;
    if (seconds <= 0) return [];
    this.meteredSeconds = cumulative;
    const usage = { promptTokens: 0, responseTokens: 0, totalTokens: 0, seconds };
    return [{ type: "usage", usage }];
  }

  /**
   * Before the voice's next words: if every word of the reply liveline asked for has been
   * said, that reply's utterance is over (what follows is the voice's own: the answer to
   * speech it held, say), so the core ends it there. A voice that says the reply otherwise
   * than written never gets here: its next words stay in the reply's utterance.
   */
  private replySaid(): ModelEvent[] {
    const saying = this.saying;
    if (!saying.counted || saying.open > 0 || saying.left > 0) return [];
    saying.counted = false;
    saying.left = 0;
    return [{ type: "turn_complete", reason: "reply_said" }];
  }

  /** The model speaks: the user's speech before it is over (its transcript came). */
  private modelSpeaks(): ModelEvent[] {
    this.modelSpoke = true;
    this.userSpeaking = false;
    return [];
  }

  /**
   * The user's speech at `startMs` on the timeline: an utterance of the model before it is
   * over there (the model yielded, or was spoken over: either way nothing more of it comes,
   * as GPT-Live neither resumes nor truncates), and the speech is the next input.
   */
  private userSays(text: string, startMs: number): ModelEvent[] {
    const events: ModelEvent[] = [];
    if (this.modelSpoke) {
      this.modelSpoke = false;
      // Spoken over (the speech starts before the model's ends) or after it: the record
      // says which; the utterance ends here either way.
      const reason = startMs < this.outputEndMs ? "spoken_over" : "yielded";
      events.push({ type: "turn_complete", reason });
    }
    if (!this.userSpeaking) {
      this.userSpeaking = true;
      events.push({ type: "speech_started" });
    }
    if (text.length > 0) events.push({ type: "input_transcript", text, finished: false });
    return events;
  }

  encode(command: ModelCommand): string[] {
    switch (command.type) {
      case "user_text":
      case "nudge":
        // Typed lines go to the backend, which the voice then speaks from; the item is taken
        // at once and waits for the next run if a call is open (habemus-papadum/pdum_aiui).
        this.gate.ask(command.turnId);
        return [
          wire({ type: "response.item.create", item: { role: "user", content: command.text } }),
          ...this.requests(),
        ];
      case "user_audio":
        return [
          JSON.stringify({
            type: "session.input_audio.append",
            // The service takes the clients' 16 kHz as it is (the session's format).
            audio: bytesToBase64(command.pcm),
          }),
        ];
      case "audio_end":
        // No commit on this wire: the service hears the stream as it comes, silence included.
        return [];
      case "audio_played":
        // Nothing to truncate: the service keeps what it said.
        return [];
      case "end_session":
        // A direct call's service session outlives liveline's sideband: it is ended here,
        // the browser's side with it (`session.closed {reason: "close_requested"}`).
        return [wire({ type: "session.close" })];
      case "tool_responses": {
        // A dropped call's output is refused by the service: not sent.
        const first = command.responses[0]?.callId ?? "";
        const turnId = command.turnId ?? this.callTurns.get(first);
        for (const r of command.responses) this.callTurns.delete(r.callId);
        const { send } = this.gate.outputs(command.responses, turnId);
        const asError = this.opts.cancelledOutput === "error";
        return [...send.map((r) => outputItem(r.callId, outputOf(r, asError))), ...this.requests()];
      }
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** The `response.create`s the gate lets go now (each remembered there, with its turn). */
  private requests(): string[] {
    const frames: string[] = [];
    for (let request = this.gate.next(); request !== null; request = this.gate.next())
      frames.push(wire({ type: "response.create", event_id: request.eventId }));
    return frames;
  }

  /**
   * The conversation as the session's `input`: text messages only. A call and its result are
   * one developer note, where the result stands (a call without one where the call does), so
   * that no trim can keep one without the other. Cut to the service's limits, newest kept
   * (`seedDropped` says how many went). Sent in the next setupFrame, not as frames.
   */
  encodeContext(context: RebuiltContext): string[] {
    const items = seedItems(context.items);
    const kept = fitSeed(items);
    this.seedDropped = items.length - kept.length;
    this.seed = kept;
    return [];
  }

  /** 1000 ends cleanly; a refused request (1002/1003/1007/1008) cannot be fixed by retrying. */
  classifyClose(code: number): CloseClass {
    if (code === 1000) return "normal";
    if (code === 1002 || code === 1003 || code === 1007 || code === 1008) return "fatal";
    return "retry";
  }
}

/** The backend's token usage for the response `event` ends, when its snapshot says it. */
function backendUsageOf(event: ResponseStreamEvent): ModelEvent[] {
  if (!("response" in event) || event.response === undefined) return [];
  const read = BackendUsage.safeParse(event.response.usage);
  if (!read.success) return [];
  const { input_tokens, output_tokens, total_tokens, input_tokens_details } = read.data;
  const cached = input_tokens_details?.cached_tokens;
  const usage = {
    promptTokens: input_tokens,
    responseTokens: output_tokens,
    totalTokens: total_tokens,
    ...(cached === undefined ? {} : { cachedTokens: cached }),
  };
  return [{ type: "usage", usage }];
}

/**
 * The seed's messages for a rebuilt conversation: a call and its result become one developer
 * note, said where the result stands (a result after the model's words is one it still owes
 * an answer to); a call with no result in the context, where the call stands.
 */
export function seedItems(context: readonly ContextItem[]): InitialItem[] {
  const answered = new Map<string, { name: string; text: string }>();
  for (const item of context)
    if (item.role === "tool_results")
      for (const r of item.results) answered.set(r.callId, { name: r.name, text: resultText(r) });
  const calls = new Map<string, string>();
  const items: InitialItem[] = [];
  for (const item of context) {
    switch (item.role) {
      case "user":
        items.push({ role: "user", content: [{ type: "input_text", text: item.text }] });
        break;
      case "model":
        items.push({ role: "assistant", content: [{ type: "output_text", text: item.text }] });
        break;
      case "model_calls": {
        const alone: string[] = [];
        for (const c of item.calls) {
          const said = `You called ${c.name}(${JSON.stringify(c.args)})`;
          if (answered.has(c.id)) calls.set(c.id, said);
          else alone.push(`${said}.`);
        }
        if (alone.length > 0) items.push(developerNote(alone.join(" ")));
        break;
      }
      case "tool_results": {
        const notes = item.results.map((r) => {
          const called = calls.get(r.callId);
          const result = `${r.name} (${r.callId}) ${resultText(r)}.`;
          return called === undefined ? result : `${called}: ${result}`;
        });
        items.push(developerNote(notes.join(" ")));
        break;
      }
      default: {
        const unreachable: never = item;
        throw new Error(`unknown context item ${JSON.stringify(unreachable)}`);
      }
    }
  }
  return items;
}

/** What a result says in the seed: what it returned, or that the call was cancelled. */
function resultText(r: ToolResponse): string {
  const reason = cancelledReasonOf(r);
  return reason === null ? `returned ${outputOf(r)}` : `was cancelled (${reason})`;
}

/** The newest items that fit the service's limits (MAX_SEED_MESSAGES, MAX_SEED_TOKENS). */
export function fitSeed(
  items: readonly InitialItem[],
  limits = { messages: MAX_SEED_MESSAGES, tokens: MAX_SEED_TOKENS },
): InitialItem[] {
  const kept: InitialItem[] = [];
  let tokens = 0;
  for (let i = items.length - 1; i >= 0 && kept.length < limits.messages; i--) {
    const item = items[i]!;
    const cost = Math.ceil(textOf(item).length / 4);
    if (tokens + cost > limits.tokens) break;
    tokens += cost;
    kept.unshift(item);
  }
  return kept;
}

function textOf(item: InitialItem): string {
  return item.content.map((part) => part.text).join("");
}

function developerNote(text: string): InitialItem {
  return { role: "developer", content: [{ type: "input_text", text }] };
}

/**
 * A result as the backend reads it. A call liveline cancelled says so, and that it is not
 * to be spoken of: the backend reads an output it is given, and an error it would tell
 * ("Here is what I found: {"error":"cancelled: barge_in"}"), not the answer the user moved
 * on to (the guides ask for a cancelled output for a declined call).
 */
function outputOf(response: ToolResponse, cancelledAsError = false): string {
  const reason = cancelledAsError ? null : cancelledReasonOf(response);
  if (reason !== null) return JSON.stringify(cancelledOutput(reason));
  return JSON.stringify(
    response.error !== undefined ? { error: response.error } : (response.result ?? {}),
  );
}

/** The output of a call that was cancelled, for the chain to go on past it. */
function cancelledOutput(reason: string): Record<string, string> {
  return {
    status: "cancelled",
    reason,
    note: "This call was cancelled and did not run to its end; do not mention it.",
  };
}

function outputItem(callId: string, output: string): string {
  return wire({
    type: "response.item.create",
    item: { type: "function_call_output", call_id: callId, output },
  });
}

/** How much a piece of text says, for matching a reply's text with its transcript. */
function spokenLength(text: string): number {
  return text.replace(/[^\p{L}\p{N}]/gu, "").length;
}

/** A backend response's id, from its lifecycle snapshot (where the service gives it). */
function responseIdOf(event: ResponseStreamEvent): string | undefined {
  if (!("response" in event) || event.response === undefined) return undefined;
  const id = (event.response as { id?: unknown }).id;
  return typeof id === "string" ? id : undefined;
}

/** An append carries at most 500 tokens (GPT-LIVE.md); counted as a quarter of the characters. */
const MAX_APPEND_CHARS = 500 * 4;

/** Cut to what one append carries, and saying so where it was cut. */
function fitAppend(content: string): string {
  if (content.length <= MAX_APPEND_CHARS) return content;
  const cut = " […cut to fit]";
  return content.slice(0, MAX_APPEND_CHARS - cut.length) + cut;
}

/** Client events are checked against their schema before they leave (audio excepted). */
function wire(event: LiveClientEvent): string {
  return JSON.stringify(LiveClientEvent.parse(event));
}

const SERVICE_ERROR_MESSAGE_CHARS = 300;

function ok(events: ModelEvent[]): DecodeResult {
  return { ok: true, events };
}

function protocolError(message: string): DecodeResult {
  return { ok: false, error: { code: "protocol_error", message } };
}
