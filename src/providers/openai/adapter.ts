/**
 * The OpenAI Realtime (GA) adapter: one object per connection, turning server events into
 * ModelEvents and ModelCommands into client events. Its state is the wire's, not the
 * session's: the response in progress (a `response.create` never goes out while one is
 * active — it waits for `response.done`, as openai-agents-js sequences it), call ids seen
 * (a duplicate `function_call_arguments.done` is one call), and whether the user is speaking.
 */
import { z } from "zod";
import { pcmResampler } from "../../audio/transcode.js";
import type {
  ModelCapabilities,
  ModelCommand,
  ModelEvent,
  RebuiltContext,
  TokenUsage,
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
import { argumentsOf } from "../function-tools.js";
import { BETA_EVENT_NAMES, ClientEvent, KNOWN_SERVER_TYPES, ServerEvent } from "./schemas.js";
import { OPENAI_REALTIME, type RealtimeService } from "./services.js";
import { agentUpdate, type SessionSettings, setupSession } from "./session-shapes.js";

export { OPENAI_CAPABILITIES } from "./services.js";

export interface OpenAIRealtimeAdapterOptions {
  model: string;
  agent: AgentSpec;
  /** "audio" (with a transcript) or "text". */
  modality?: "audio" | "text" | undefined;
  /** The model that transcribes the user's speech. */
  transcriptionModel?: string | undefined;
  /** g711_ulaw: audio/pcmu both ways, passed through untouched (a phone call's). Default pcm16. */
  audio?: AudioEncoding | undefined;
  /** The family's service this connection speaks to (./services.ts); OpenAI Realtime unless set. */
  service?: RealtimeService | undefined;
}

export class OpenAIRealtimeAdapter implements ProviderAdapter {
  readonly capabilities: ModelCapabilities;
  /** Server events of types liveline does not read (never fatal). */
  ignored = 0;
  private live = false;
  private activeResponse: string | null = null;
  /**
   * Inputs that ask for an answer, held while a response is active or asked for: each its
   * items and its `response.create`, sent once that response is done. Never coalesced, so
   * that every input gets its own response (cancelled when a newer one waits), as the core
   * counts one generation per input. The items wait too: a response says what the
   * conversation held when it began, so one begun with a later line already in it answers
   * that line — and, should its cancel come too late, that answer was taken for the earlier
   * input's (found by the attack: the last of three quick lines got "Anything else?").
   */
  private readonly owed: string[][] = [];
  /** A `response.create` went out and its `response.created` has not come back yet. */
  private responseRequested = false;
  private readonly calls = new Set<string>();
  /**
   * The conversation item of each call whose result has not gone yet: a side effect's result
   * is placed right after its call (`previous_item_id`), not at the end. Sent late, after
   * the model's next words, it would read as new, and the next response would speak it
   * (found by the attack of 2026-11-29).
   */
  private readonly callItems = new Map<string, string>();
  /**
   * The active response's function calls, handed on together when it is done: one batch, so
   * that their results go back as one input with one `response.create`. A response is
   * generated from the conversation as it stood at its `response.create`, so a result added
   * while a later response runs is never heard by it: results sent one by one, as each
   * call finished, left the second one to a response of its own (found by trying it).
   */
  private responseCalls: ToolCallRequest[] = [];
  private speaking = false;
  /**
   * The audio items of the reply being said, in order, with how long each is (ms): the reply
   * to the user's latest input, over every response it took (a preamble and its answer are two
   * items of one response; results bring another response). `played` cuts there.
   */
  private replyAudio: Array<{ id: string; ms: number }> = [];
  /** The user gave input since: the next response starts a new reply's audio. */
  private newReply = true;
  /** A handoff's `session.update`, held while a response is active. */
  private heldUpdate: string | null = null;

  /** The session's audio is G.711 μ-law (a phone call's), sent and received as it is. */
  private readonly mulaw: boolean;
  /** The service's ways (its session's shape, event names, audio rate, truncation). */
  private readonly service: RealtimeService;
  private readonly session: SessionSettings;
  /**
   * The clients' 16 kHz PCM raised to the 24 kHz the service takes (null where it takes the
   * audio as it comes): one stream per connection, the filter's history kept across chunks.
   */
  private readonly inputTo24k: ((pcm: Uint8Array) => Uint8Array) | null;

  constructor(private readonly opts: OpenAIRealtimeAdapterOptions) {
    this.mulaw = opts.audio === "g711_ulaw";
    this.service = opts.service ?? OPENAI_REALTIME;
    this.inputTo24k =
      this.mulaw || this.service.inputRate === 16000 ? null : pcmResampler(16000, 24000);
    this.capabilities = this.service.capabilities;
    const modality = opts.modality ?? "audio";
    this.session = {
      service: this.service,
      model: opts.model,
      // A service that cannot write only speaks: its transcript is its words.
      modality: this.service.textOutput ? modality : "audio",
      mulaw: this.mulaw,
      transcriptionModel: opts.transcriptionModel ?? "gpt-4o-mini-transcribe",
    };
  }

  /** No resumption exists: every connection starts with the session's setup (a seed may follow). */
  setupFrame(_opts: { resumeHandle?: string | undefined; seeded: boolean }): string {
    return setupSession(this.session, this.opts.agent);
  }

  /**
   * A call's sideband attached (a SIP call, accepted as the agent's session): nothing is set
   * up on it, and a later `session.updated` is not its setup. A call set up as another agent
   * (a handoff since) takes this one's instructions and tools.
   */
  attachFrames(opts: { handedOff: boolean }): string[] {
    this.live = true;
    return opts.handedOff ? [agentUpdate(this.session, this.opts.agent)] : [];
  }

  /**
   * A handoff on this connection: the new agent's instructions, tools and transcription
   * language, never while a response is active (openai-agents-js updates the session between
   * responses too). The voice stays: the service refuses a new voice once audio was spoken,
   * so agents with different voices never share a connection (sharedConnectionKey).
   */
  updateAgent(agent: AgentSpec): string[] {
    const frame = agentUpdate(this.session, agent);
    if (this.activeResponse !== null || this.responseRequested) {
      this.heldUpdate = frame;
      return [];
    }
    return [frame];
  }

  decode(frame: string | ArrayBuffer | Uint8Array): DecodeResult {
    const text = typeof frame === "string" ? frame : new TextDecoder().decode(frame);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return protocolError("a server event that is not JSON");
    }
    const type = z.object({ type: z.string() }).safeParse(json);
    if (!type.success) return protocolError("a server event without a type");
    // A service that keeps the original event names: each read as its GA name.
    const renamed =
      this.service.eventNames === "beta" ? BETA_EVENT_NAMES[type.data.type] : undefined;
    if (renamed !== undefined) {
      type.data.type = renamed;
      json = { ...(json as Record<string, unknown>), type: renamed };
    }
    if (!KNOWN_SERVER_TYPES.has(type.data.type)) {
      this.ignored++;
      return { ok: true, events: [] };
    }
    const parsed = ServerEvent.safeParse(json);
    if (!parsed.success) {
      return protocolError(`${type.data.type}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    }
    return this.onServerEvent(parsed.data);
  }

  private onServerEvent(event: ServerEvent): DecodeResult {
    switch (event.type) {
      case "session.created":
        return ok([]);
      case "session.updated":
        // Our session.update took effect: the connection is set up (once).
        if (this.live) return ok([]);
        this.live = true;
        return ok([{ type: "setup_complete" }]);
      case "response.created": {
        this.activeResponse = event.response.id;
        if (this.newReply) {
          this.newReply = false;
          this.replyAudio = [];
        }
        const ours = this.responseRequested;
        this.responseRequested = false;
        // The model is at work on an answer (a thinking model can take seconds to its first
        // byte). Ours, and newer input already waits for its own answer: this one is cut short.
        if (!ours || this.owed.length === 0) return ok([{ type: "working" }]);
        return { ok: true, events: [], send: [wire({ type: "response.cancel" })] };
      }
      case "response.done": {
        this.activeResponse = null;
        this.responseRequested = false;
        const events: ModelEvent[] = [];
        if (this.responseCalls.length > 0) {
          events.push({ type: "tool_call", calls: this.responseCalls });
          this.responseCalls = [];
        }
        const usage = event.response.usage ? usageOf(event.response.usage) : null;
        if (usage !== null) events.push({ type: "usage", usage });
        if (event.response.status === "cancelled") events.push({ type: "interrupted" });
        events.push(
          event.response.status === "completed"
            ? { type: "turn_complete" }
            : { type: "turn_complete", reason: event.response.status },
        );
        // What waited for this response to end goes out now: a handoff's new setup first, so
        // that the next response is the new agent's.
        const send: string[] = [];
        if (this.heldUpdate !== null) {
          send.push(this.heldUpdate);
          this.heldUpdate = null;
        }
        const next = this.owed.shift();
        if (next !== undefined) {
          this.responseRequested = true;
          send.push(...next);
        }
        return { ok: true, events, send };
      }
      case "response.output_text.delta":
        return ok([{ type: "text_delta", text: event.delta }]);
      case "response.output_audio_transcript.delta":
        return ok([{ type: "transcript_delta", text: event.delta }]);
      case "response.output_audio.delta": {
        let pcm: Uint8Array;
        try {
          pcm = base64ToBytes(event.delta);
        } catch {
          return protocolError("response.output_audio.delta: audio that is not base64");
        }
        const last = this.replyAudio.at(-1);
        const item = last?.id === event.item_id ? last : { id: event.item_id, ms: 0 };
        if (item !== last) this.replyAudio.push(item);
        // 24 kHz PCM16: 48 bytes a ms; G.711 at 8 kHz: 8.
        item.ms += pcm.length / (this.mulaw ? 8 : 48);
        return ok([{ type: "audio_delta", pcm }]);
      }
      case "response.function_call_arguments.done": {
        if (this.calls.has(event.call_id)) return ok([]); // delivered twice: one call
        this.calls.add(event.call_id);
        if (event.item_id !== undefined) this.callItems.set(event.call_id, event.item_id);
        const call = { id: event.call_id, name: event.name, args: argumentsOf(event.arguments) };
        return ok(this.callComplete(call));
      }
      case "conversation.item.input_audio_transcription.delta":
        // The completed transcript follows in one piece; deltas would count it twice.
        return ok([]);
      case "conversation.item.input_audio_transcription.completed":
        return ok([{ type: "input_transcript", text: event.transcript, finished: true }]);
      case "input_audio_buffer.speech_started":
        this.speaking = true;
        this.newReply = true;
        return ok([{ type: "speech_started" }]);
      case "input_audio_buffer.speech_stopped":
      case "input_audio_buffer.committed":
        this.speaking = false;
        return ok([]);
      // A SIP call's sideband: what the call itself says, for the call's line.
      case "input_audio_buffer.dtmf_event_received":
        return /^[0-9*#A-D]$/.test(event.event)
          ? { ok: true, events: [], call: [{ kind: "key", digit: event.event }] }
          : ok([]);
      case "output_audio_buffer.started":
        return { ok: true, events: [], call: [{ kind: "playing" }] };
      case "output_audio_buffer.stopped":
        return { ok: true, events: [], call: [{ kind: "played_out" }] };
      case "output_audio_buffer.cleared":
        return { ok: true, events: [], call: [{ kind: "cut" }] };
      case "error":
        if (event.error.code === "conversation_already_has_active_response") {
          // Our response.create met a response the server began itself (server VAD): ask
          // again when that one is done. Never reached by liveline's own sequencing.
          this.responseRequested = false;
          this.owed.push([wire({ type: "response.create" })]);
        }
        // The session stays open (the API reference: "most errors are recoverable"): a
        // reconnect would cost a new session, its context sent again, and the reply under way.
        return ok([
          {
            type: "service_error",
            code: event.error.code ?? event.error.type ?? "error",
            message: (event.error.message ?? "").slice(0, SERVICE_ERROR_MESSAGE_CHARS),
          },
        ]);
      default: {
        const unreachable: never = event;
        throw new Error(`unknown server event ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * The reply heard for `ms`: the item it stopped in is cut there, every item after it at 0
   * (never heard). Counted across the reply's items (a preamble's and its answer's): the
   * service refuses a cut past an item's own audio.
   */
  private cutReplyAt(ms: number): string[] {
    const cuts: string[] = [];
    let start = 0;
    for (const item of this.replyAudio) {
      const end = start + item.ms;
      if (ms < end)
        cuts.push(
          wire({
            type: "conversation.item.truncate",
            item_id: item.id,
            content_index: 0,
            audio_end_ms: Math.max(0, Math.floor(ms - start)),
          }),
        );
      start = end;
    }
    return cuts;
  }

  encode(command: ModelCommand): string[] {
    switch (command.type) {
      case "user_text": {
        // New text while a response runs is a barge-in: it is cancelled, and the answer to
        // the text is asked for once it is done.
        // A response asked for but not yet created is cancelled as soon as it is (one owed).
        const cancel = this.activeResponse !== null ? [wire({ type: "response.cancel" })] : [];
        this.newReply = true;
        return [...cancel, ...this.prompt([wire(userMessage(command.text))])];
      }
      case "nudge":
        return this.prompt([wire(userMessage(command.text))]);
      case "user_audio": {
        // The hot path (50 chunks a second): its one fixed shape is typed here and checked by
        // the conformance test, not parsed again per chunk.
        const pcm = this.inputTo24k === null ? command.pcm : this.inputTo24k(command.pcm);
        const append: ClientEvent = {
          type: "input_audio_buffer.append",
          audio: bytesToBase64(pcm),
        };
        return [JSON.stringify(append)];
      }
      case "audio_end":
        // The client stopped streaming mid-utterance: the server's VAD hears no silence, so
        // the utterance is committed here. Otherwise VAD already ended it (or heard no speech)
        // — unless the speech was held while the connection was set up: it goes out in one
        // burst with this end, before the server's speech_started can come back.
        if (!this.speaking && command.held !== true) return [];
        this.speaking = false;
        // The audio is in the buffer already: committed now, answered in its turn.
        return [wire({ type: "input_audio_buffer.commit" }), ...this.prompt([])];
      case "end_session":
        // The session ends with its socket.
        return [];
      case "audio_played":
        // The user heard this much of the latest reply: the model's context is cut there
        // (where the service can cut it).
        if (!this.service.truncate) return [];
        return this.cutReplyAt(command.ms);
      case "tool_responses": {
        const items = command.responses.map((r) => {
          const after = this.callItems.get(r.callId);
          this.callItems.delete(r.callId);
          return wire({
            type: "conversation.item.create",
            ...(r.scheduling === "silent" && after !== undefined
              ? { previous_item_id: after }
              : {}),
            item: {
              type: "function_call_output",
              call_id: r.callId,
              output: JSON.stringify(r.error !== undefined ? { error: r.error } : (r.result ?? {})),
            },
          });
        });
        return this.promptsAfter(command.responses) ? this.prompt(items) : items;
      }
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * An input that asks for an answer: its items and one `response.create`, now, or held with
   * them until the active response is done (never two in flight).
   */
  private prompt(items: string[]): string[] {
    const frames = [...items, wire({ type: "response.create" })];
    const busy = this.activeResponse !== null || this.responseRequested;
    if (busy && this.holdsWhileBusy()) {
      this.owed.push(frames);
      return [];
    }
    this.responseRequested = true;
    return frames;
  }

  /**
   * A call whose arguments are complete: held until its response is done, so the calls of one
   * response go to the core together (a measurement arm may run it at once instead).
   */
  protected callComplete(call: ToolCallRequest): ModelEvent[] {
    this.responseCalls.push(call);
    return [];
  }

  /** Silent results are added quietly; anything else prompts exactly one response. */
  protected promptsAfter(responses: readonly ToolResponse[]): boolean {
    return responses.some((r) => r.scheduling !== "silent");
  }

  /** A prompt waits for the active response to be done: never two in flight. */
  protected holdsWhileBusy(): boolean {
    return true;
  }

  /** The conversation as items (OpenAI takes function calls and outputs as items); no response. */
  encodeContext(context: RebuiltContext): string[] {
    return context.items.flatMap((item): string[] => {
      switch (item.role) {
        case "user":
          return [wire(userMessage(item.text))];
        case "model":
          return [
            wire({
              type: "conversation.item.create",
              item: {
                type: "message",
                role: "assistant",
                // The flat (original) session's assistant text is `text`.
                content: [
                  {
                    type: this.service.sessionShape === "flat" ? "text" : "output_text",
                    text: item.text,
                  },
                ],
              },
            }),
          ];
        case "model_calls":
          return item.calls.map((call) =>
            wire({
              type: "conversation.item.create",
              item: {
                type: "function_call",
                call_id: call.id,
                name: call.name,
                arguments: JSON.stringify(call.args),
              },
            }),
          );
        case "tool_results":
          return item.results.map((r) =>
            wire({
              type: "conversation.item.create",
              item: {
                type: "function_call_output",
                call_id: r.callId,
                output: JSON.stringify(
                  r.error !== undefined ? { error: r.error } : (r.result ?? {}),
                ),
              },
            }),
          );
        default: {
          const unreachable: never = item;
          throw new Error(`unknown context item ${JSON.stringify(unreachable)}`);
        }
      }
    });
  }

  /** 1000 ends cleanly; a refused request (1002/1003/1007/1008) cannot be fixed by retrying. */
  classifyClose(code: number): CloseClass {
    if (code === 1000) return "normal";
    if (code === 1002 || code === 1003 || code === 1007 || code === 1008) return "fatal";
    return "retry";
  }
}

/** Client events are checked against their schema before they leave (a bug here, not there); audio chunks excepted (see encode). */
function wire(event: ClientEvent): string {
  return JSON.stringify(ClientEvent.parse(event));
}

function userMessage(text: string): ClientEvent {
  return {
    type: "conversation.item.create",
    item: { type: "message", role: "user", content: [{ type: "input_text", text }] },
  };
}

/** A service error's message as the timeline keeps it (it may quote what was sent). */
const SERVICE_ERROR_MESSAGE_CHARS = 300;

function ok(events: ModelEvent[]): DecodeResult {
  return { ok: true, events };
}

function protocolError(message: string): DecodeResult {
  return { ok: false, error: { code: "protocol_error", message } };
}

/** The service's counts as liveline's, or null when it gave none (an empty usage). */
function usageOf(u: {
  total_tokens?: number;
  input_tokens?: number;
  output_tokens?: number;
  input_token_details?: {
    text_tokens?: number;
    audio_tokens?: number;
    cached_tokens?: number;
    cached_tokens_details?: { text_tokens?: number; audio_tokens?: number };
  };
  output_token_details?: { text_tokens?: number; audio_tokens?: number };
}): TokenUsage | null {
  if (u.input_tokens === undefined && u.output_tokens === undefined && u.total_tokens === undefined)
    return null;
  const prompt = u.input_tokens ?? 0;
  const response = u.output_tokens ?? 0;
  const usage: TokenUsage = {
    promptTokens: prompt,
    responseTokens: response,
    totalTokens: u.total_tokens ?? prompt + response,
  };
  const inDetails = u.input_token_details;
  if (inDetails?.cached_tokens !== undefined) usage.cachedTokens = inDetails.cached_tokens;
  const cachedDetails = inDetails?.cached_tokens_details;
  if (cachedDetails)
    usage.cachedByModality = {
      TEXT: cachedDetails.text_tokens ?? 0,
      AUDIO: cachedDetails.audio_tokens ?? 0,
    };
  if (inDetails)
    usage.promptByModality = {
      TEXT: inDetails.text_tokens ?? 0,
      AUDIO: inDetails.audio_tokens ?? 0,
    };
  const outDetails = u.output_token_details;
  if (outDetails)
    usage.responseByModality = {
      TEXT: outDetails.text_tokens ?? 0,
      AUDIO: outDetails.audio_tokens ?? 0,
    };
  return usage;
}
