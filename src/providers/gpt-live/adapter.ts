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
 * go back as `function_call_output` items and one `response.create`.
 */
import type {
  ModelCapabilities,
  ModelCommand,
  ModelEvent,
  RebuiltContext,
  ToolCallRequest,
  ToolResponse,
} from "../../vocabulary/model.js";
import type {
  AgentSpec,
  AudioEncoding,
  CloseClass,
  DecodeResult,
  ProviderAdapter,
} from "../../vocabulary/provider-adapter.js";
import { base64ToBytes, bytesToBase64 } from "../base64.js";
import { argumentsOf, parametersOf } from "../function-tools.js";
import { resample16kTo24k } from "../openai/audio.js";
import {
  BackendUsage,
  functionCallOf,
  type InitialItem,
  LiveClientEvent,
  type LiveServerEvent,
  type ResponseStreamEvent,
  readServerEvent,
} from "./schemas.js";

/** The delegation key of a backend response the client asked for (a typed line). */
const CLIENT_ASKED = "";
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
   * (src/measurement), which hands on every delivery as the frameworks in the field do.
   */
  dedupeCalls?: boolean | undefined;
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
  /** Each handed-on call's response: the ids of its calls still without an output. */
  private readonly awaiting = new Map<string, Set<string>>();
  /** Delegations the voice started itself whose backend response has not begun. */
  private readonly voiceDelegations = new Set<string>();
  /**
   * Each `response.create` liveline sent that the service has not started yet, oldest first,
   * with the turn the reply answers (the command's `turnId`): the service starts them in the
   * order sent, so each reply is known by its request, never guessed.
   */
  private readonly requested: Array<{ eventId: string; turnId: string | undefined }> = [];
  private requestCount = 0;
  /**
   * Backend responses liveline asked for (by delegation key) that have shown no output yet,
   * with the turn each answers.
   */
  private readonly repliesAsked = new Map<string, string | undefined>();
  /** Backend responses liveline asked for (by delegation key) that have not ended. */
  private readonly repliesOpen = new Set<string>();
  /** The model has said something since the last boundary on the timeline. */
  private modelSpoke = false;
  /** Where the model's speech ends on the session timeline (ms). */
  private outputEndMs = 0;
  /** The user is speaking (input transcript since the model last spoke). */
  private userSpeaking = false;
  /** The session's metered seconds so far, as last reported (cumulative, per connection). */
  private meteredSeconds = 0;
  private readonly mulaw: boolean;

  constructor(private readonly opts: GptLiveAdapterOptions) {
    this.mulaw = opts.audio === "g711_ulaw";
  }

  /** Every connection starts a session; a seed rides in its `input` (see encodeContext). */
  setupFrame(_opts: { resumeHandle?: string | undefined; seeded: boolean }): string {
    const { agent } = this.opts;
    const format = this.mulaw
      ? ({ type: "audio/pcmu", rate: 8000 } as const)
      : ({ type: "audio/pcm", rate: 24000 } as const);
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
    return this.onServerEvent(event);
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
        return ok([...this.modelSpeaks(), { type: "audio_delta", pcm: audio }]);
      }
      case "session.output_transcript.delta":
        this.outputEndMs = Math.max(this.outputEndMs, event.end_ms);
        return ok([
          ...this.modelSpeaks(),
          {
            type: "transcript_delta",
            text: event.delta,
            span: { startMs: event.start_ms, endMs: event.end_ms },
          },
        ]);
      case "session.input_transcript.delta":
        return ok(this.userSays(event.delta, event.start_ms));
      case "session.delegation.created":
        // The backend starts on it: the model works on an answer, it is not silent. Its first
        // response is the voice's own doing, not a reply liveline asked for.
        this.voiceDelegations.add(event.delegation.id);
        return ok([
          { type: "delegation", id: event.delegation.id, target: event.delegation.target },
        ]);
      case "response.event":
        return ok(this.onBackendEvent(event.event, event.delegation_id ?? null));
      case "error": {
        // A refused `response.create` starts nothing: no reply will come for its request.
        const refused = event.error.client_event_id ?? event.client_event_id;
        const at = this.requested.findIndex((r) => r.eventId === refused);
        if (at !== -1) this.requested.splice(at, 1);
        return ok([
          {
            type: "service_error",
            code: event.error.code,
            message: event.error.message.slice(0, SERVICE_ERROR_MESSAGE_CHARS),
          },
        ]);
      }
      case "session.closed":
        // The service ends the session (expired, moderation, a hang-up): the socket's close
        // follows, and the core reconnects or gives up by its close code.
        return ok([
          ...this.metered(event.usage.seconds),
          { type: "service_error", code: `session_closed:${event.reason}`, message: event.reason },
        ]);
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
   * backend continues only once every call of the response has its output, so they are one
   * batch to the core (whose results go back together, with one `response.create`).
   */
  private onBackendEvent(event: ResponseStreamEvent, delegationId: string | null): ModelEvent[] {
    const key = delegationId ?? CLIENT_ASKED;
    if (event.type === "response.created") {
      // A response that is not a delegation's first is one liveline's response.create asked
      // for (results, a line): the service starts no other.
      if (!this.voiceDelegations.delete(key)) {
        this.repliesAsked.set(key, this.requested.shift()?.turnId);
        this.repliesOpen.add(key);
      }
      return [{ type: "working" }];
    }
    // Its first output: the voice says it from here (before its calls, which are its turn's).
    const ready: ModelEvent[] = [];
    if (
      (event.type === "response.output_text.delta" || RESPONSE_ENDS.has(event.type)) &&
      this.repliesAsked.has(key)
    ) {
      const words = event.type === "response.output_text.delta";
      ready.push({ type: "reply_ready", turnId: this.repliesAsked.get(key), words });
      this.repliesAsked.delete(key);
    }
    const call = functionCallOf(event);
    if (call !== null) {
      // Delivered twice (or on another connection of the session): one call.
      if (this.opts.dedupeCalls !== false) {
        if (this.calls.has(call.call_id)) return [];
        this.calls.add(call.call_id);
      }
      const calls = this.backendCalls.get(key) ?? [];
      calls.push({ id: call.call_id, name: call.name, args: argumentsOf(call.arguments) });
      this.backendCalls.set(key, calls);
      return [];
    }
    if (!RESPONSE_ENDS.has(event.type)) return ready;
    const ended = [...ready, ...backendUsageOf(event)];
    // A reply liveline asked for is over after its calls (the core waits on those next).
    const done: ModelEvent[] = this.repliesOpen.delete(key) ? [{ type: "reply_done" }] : [];
    const calls = this.backendCalls.get(key);
    this.backendCalls.delete(key);
    if (calls === undefined) return [...ended, ...done];
    const outstanding = new Set(calls.map((c) => c.id));
    for (const c of calls) this.awaiting.set(c.id, outstanding);
    return [...ended, { type: "tool_call", calls }, ...done];
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
        // Typed lines go to the backend, which the voice then speaks from.
        return [
          wire({ type: "response.item.create", item: { role: "user", content: command.text } }),
          this.requestReply(command.turnId),
        ];
      case "user_audio":
        return [
          JSON.stringify({
            type: "session.input_audio.append",
            audio: bytesToBase64(this.mulaw ? command.pcm : resample16kTo24k(command.pcm)),
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
      case "tool_responses":
        return [
          ...command.responses.map((r) =>
            wire({
              type: "response.item.create",
              item: { type: "function_call_output", call_id: r.callId, output: outputOf(r) },
            }),
          ),
          ...(this.continues(command.responses) ? [this.requestReply(command.turnId)] : []),
        ];
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** A `response.create`, remembered with the turn its reply answers until the service starts it. */
  private requestReply(turnId: string | undefined): string {
    this.requestCount++;
    const eventId = `liveline_reply_${this.requestCount}`;
    this.requested.push({ eventId, turnId });
    return wire({ type: "response.create", event_id: eventId });
  }

  /**
   * Whether these outputs continue the backend: the outputs that complete a response's calls
   * decide, by the core's word as they are sent (a result that speaks, or one that lets the
   * reply go on: `when_idle`). An output sent earlier that asked waits for them (the service
   * refuses `response.create` while an output is missing), and is not enough alone: once its
   * turn is over or cut, the rest are silent, and the reply it asked for is no longer wanted
   * (it would come in the next turn).
   */
  private continues(responses: readonly ToolResponse[]): boolean {
    const asked = new Set<Set<string>>();
    const completed: Set<string>[] = [];
    let go = false;
    for (const r of responses) {
      const speaks = r.scheduling !== "silent";
      const outstanding = this.awaiting.get(r.callId);
      this.awaiting.delete(r.callId);
      // A call this connection did not hand on: its response is not known here; as asked.
      if (outstanding === undefined) {
        go ||= speaks;
        continue;
      }
      outstanding.delete(r.callId);
      if (speaks) asked.add(outstanding);
      if (outstanding.size === 0) completed.push(outstanding);
    }
    return go || completed.some((set) => asked.has(set));
  }

  /**
   * The conversation as the session's `input`: text messages only, so a call and its result
   * travel as one developer note and can never be split. Cut to the service's limits, newest
   * kept (`seedDropped` says how many went). Sent in the next setupFrame, not as frames.
   */
  encodeContext(context: RebuiltContext): string[] {
    const items: InitialItem[] = context.items.map((item): InitialItem => {
      switch (item.role) {
        case "user":
          return { role: "user", content: [{ type: "input_text", text: item.text }] };
        case "model":
          return { role: "assistant", content: [{ type: "output_text", text: item.text }] };
        case "model_calls":
          return developerNote(
            item.calls.map((c) => `You called ${c.name}(${JSON.stringify(c.args)}).`).join(" "),
          );
        case "tool_results":
          return developerNote(
            item.results.map((r) => `${r.name} (${r.callId}) returned ${outputOf(r)}.`).join(" "),
          );
        default: {
          const unreachable: never = item;
          throw new Error(`unknown context item ${JSON.stringify(unreachable)}`);
        }
      }
    });
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
  if (!("response" in event)) return [];
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

/** The newest items that fit MAX_SEED_MESSAGES and MAX_SEED_TOKENS. */
export function fitSeed(items: readonly InitialItem[]): InitialItem[] {
  const kept: InitialItem[] = [];
  let tokens = 0;
  for (let i = items.length - 1; i >= 0 && kept.length < MAX_SEED_MESSAGES; i--) {
    const item = items[i]!;
    const cost = Math.ceil(textOf(item).length / 4);
    if (tokens + cost > MAX_SEED_TOKENS) break;
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

function outputOf(response: ToolResponse): string {
  return JSON.stringify(
    response.error !== undefined ? { error: response.error } : (response.result ?? {}),
  );
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
