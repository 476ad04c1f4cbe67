/**
 * What a provider is, to the session: every live model service (Gemini Live, OpenAI
 * Realtime, a stand-in) is reached through these few types, and the session knows no other.
 * A provider folder in src/providers implements them; src/provider-registry.ts lists the
 * providers. Web-standard only (WebSocket, strings): no runtime specifics here.
 */
import type { z } from "zod";
import type { ModelCapabilities, ModelCommand, ModelEvent, RebuiltContext } from "./model.js";

/** What a close code means: the session ended cleanly, a reconnect may help, or it cannot. */
export type CloseClass = "normal" | "retry" | "fatal";

export type DecodeResult =
  /**
   * `send`: frames the wire itself owes the service now (a request that waited for this).
   * `call`: what a phone call's sideband told of the call itself (not the model's doing).
   */
  | { ok: true; events: ModelEvent[]; send?: string[] | undefined; call?: CallSignal[] | undefined }
  | { ok: false; error: { code: "protocol_error"; message: string } };

/**
 * What a SIP call's sideband says of the call (OpenAI Realtime: SIP only): a key the caller
 * pressed; the model's audio began to play to the caller (`playing`), has all played out
 * (`played_out`), or the caller spoke over it and what was left was dropped (`cut`). For the
 * call's line (src/session/phone-call-line.ts), never the core.
 */
export type CallSignal =
  | { kind: "key"; digit: string }
  | { kind: "playing" }
  | { kind: "played_out" }
  | { kind: "cut" };

/** A tool as the session offers it to the model (the provider declares it its own way). */
export interface ToolSpec {
  name: string;
  description: string;
  args: z.ZodType;
  /** The arguments' JSON Schema as given elsewhere (an MCP server's): declared as it is. */
  inputSchema?: Readonly<Record<string, unknown>> | undefined;
  /** `silent` tools may be declared non-blocking where the model can take them so. */
  followUp: "silent" | "speak";
}

/** What the model connection is for: the agent's instructions and tools. */
export interface AgentSpec {
  systemInstruction: string;
  tools: readonly ToolSpec[];
  /** The provider's voice name; the provider's default when unset. */
  voice?: string | undefined;
  /** The model as the provider names it; the provider's configured model when unset. */
  model?: string | undefined;
  /** BCP-47 code of the conversation's speech, where the provider takes one. */
  language?: string | undefined;
}

/** One model connection's codec: wire frames in and out, for the core's vocabulary. */
export interface ProviderAdapter {
  readonly capabilities: ModelCapabilities;
  /** The first frame of the connection: resume with a handle, or say a seed follows. */
  setupFrame(opts: { resumeHandle?: string | undefined; seeded: boolean }): string;
  decode(frame: string | ArrayBuffer | Uint8Array): DecodeResult;
  encode(command: ModelCommand): string[];
  /** The frames that seed a fresh connection with a rebuilt conversation (none if empty). */
  encodeContext(context: RebuiltContext): string[];
  classifyClose(code: number): CloseClass;
  /**
   * Where the service lets a live connection change its agent (OpenAI `session.update`): the
   * frames that give it `agent`'s instructions and tools, or none now when they must wait for
   * the response in progress (the adapter sends them, in `decode`'s `send`, when it is done).
   */
  updateAgent?(agent: AgentSpec): string[];
  /**
   * A sideband just attached to a direct call (GPT-Live): the frames that give the running
   * call this adapter's agent, as far as the service lets it change. `handedOff`: the call was
   * set up as another agent (a handoff since), so what cannot change in place is told too.
   */
  attachFrames?(opts: { handedOff: boolean }): string[];
}

/** Direct calls a device places with the service (WebRTC): they are created, not accepted. */
export type WebRtcCalls = DirectCallService & Required<Pick<DirectCallService, "create">>;

/** A session's way to its model, as a provider sets it up. */
/**
 * How a session's audio is encoded, both ways: PCM16 (16 kHz in, 24 kHz out: what clients
 * speak), or G.711 μ-law at 8 kHz (a phone line's), which a provider that takes it natively
 * gets untouched from a call and gives back untouched.
 */
export type AudioEncoding = "pcm16" | "g711_ulaw";

export interface ModelRoute {
  /** The model the session asks for, as the provider names it. */
  readonly model: string;
  /** The audio this session's connection speaks (g711_ulaw only where one was asked for). */
  readonly audio: AudioEncoding;
  readonly capabilities: ModelCapabilities;
  /** Opens the provider's WebSocket (accepted, binaryType set). */
  connect(attempt: number): Promise<WebSocket>;
  /** A fresh codec for connection number `attempt`. */
  adapter(attempt: number): ProviderAdapter;
  /**
   * Two agents' sessions with the same key can share one live connection (a handoff between
   * them is the adapter's `updateAgent`); absent: the connection's setup is fixed, and a new
   * agent needs a new connection (Gemini Live).
   */
  readonly sharedConnectionKey?: string | undefined;
  /** Where the service takes calls a device places with it directly (GPT-Live's WebRTC). */
  readonly directCallService?: DirectCallService | undefined;
}

/** The service's answer to a device's offer: the call's session there, and its SDP answer. */
export interface DirectCall {
  /** The service's id of the call's session: where a sideband attaches. */
  serviceSessionId: string;
  sdp: string;
}

/**
 * A call the user's device holds with the service itself (WebRTC, or a phone over SIP: its
 * audio never passes through liveline), and liveline as the call's sideband: it reads the
 * call's events and answers its tool calls there. The server's key creates or accepts the
 * call; the device never sees it.
 */
export interface DirectCallService {
  /**
   * Creates the call for the device's SDP `offer`, set up as this session's agent and seeded
   * with `context`. Throws DirectCallRefused when the service says no. (GPT-Live's WebRTC.)
   */
  create?(offer: string, context: RebuiltContext): Promise<DirectCall>;
  /**
   * Accepts a call that reached the service by SIP (its id from the service's webhook), set
   * up as this session's agent. Throws DirectCallRefused when the service says no.
   */
  accept?(sipCallId: string): Promise<void>;
  /** Transfers a SIP call (a SIP REFER to `targetUri`, `tel:+…`); never throws. */
  refer?(
    sipCallId: string,
    targetUri: string,
  ): Promise<{ ok: true } | { ok: false; problem: string }>;
  /** Ends a SIP call. Throws DirectCallRefused when the service says no. */
  hangUp?(sipCallId: string): Promise<void>;
  /**
   * Opens the call's sideband (accepted, binaryType set); nothing is set up on it. A call
   * that is over is refused (UpstreamRefused).
   */
  attach(serviceSessionId: string): Promise<WebSocket>;
}
