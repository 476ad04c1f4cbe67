/**
 * The Gemini Live adapter: one object per upstream connection that turns server frames into
 * ModelEvents and ModelCommands into text frames ready for `WebSocket.send`. It holds no
 * session logic; its only state is the decoder's (duplicate call ids, synthetic ids).
 */
import type { ModelCapabilities, ModelCommand, RebuiltContext } from "../../vocabulary/model.js";
import type { ProviderAdapter } from "../../vocabulary/provider-adapter.js";
import { capabilitiesFor, isVertexEndpoint, textRouteFor } from "./capabilities.js";
import { type CloseClass, classifyClose } from "./close-codes.js";
import {
  createDecoderState,
  type DecodeResult,
  type DecoderState,
  decodeServerFrame,
} from "./decode.js";
import {
  encodeCommand,
  encodeRebuiltContext,
  encodeSetup,
  type GeminiSetupOptions,
  type GeminiWireRules,
} from "./encode.js";

export interface GeminiLiveAdapterOptions {
  model: string;
  /** "developer", "vertex" or the connect URL (used to detect Vertex). */
  endpoint: string;
  /** Explicit capabilities; otherwise looked up from the model and endpoint. */
  capabilities?: ModelCapabilities | undefined;
  /**
   * Prefix for synthetic call ids. Give each connection of a session a distinct one
   * (e.g. "c3"), so ids of calls the server sent without an id never repeat.
   */
  callIdPrefix?: string | undefined;
  /** A measurement arm's seed of a rebuilt context in place of liveline's (text only). */
  seed?: ((ctx: RebuiltContext) => unknown) | undefined;
  /** What every setup of this connection says (instructions, tools, modality, compression). */
  setup?: Omit<GeminiSetupOptions, "model" | "resumptionHandle" | "initialHistoryInClientContent">;
}

export class GeminiLiveAdapter implements ProviderAdapter {
  readonly model: string;
  readonly endpoint: string;
  readonly capabilities: ModelCapabilities;
  readonly rules: GeminiWireRules;
  private readonly seed: (ctx: RebuiltContext) => unknown;
  private readonly setup: NonNullable<GeminiLiveAdapterOptions["setup"]>;
  private readonly decoder: DecoderState;

  constructor(opts: GeminiLiveAdapterOptions) {
    this.model = opts.model;
    this.endpoint = opts.endpoint;
    this.capabilities = opts.capabilities ?? capabilitiesFor(opts.model, opts.endpoint);
    this.rules = {
      textRoute: textRouteFor(opts.model),
      vertex: isVertexEndpoint(opts.endpoint, opts.model),
    };
    this.decoder = createDecoderState(opts.callIdPrefix);
    this.seed = opts.seed ?? encodeRebuiltContext;
    this.setup = opts.setup ?? {};
  }

  /** The connection's first frame: resume with a handle, or say the history is seeded. */
  setupFrame(opts: { resumeHandle?: string | undefined; seeded: boolean }): string {
    return this.setupMessage({
      ...this.setup,
      resumptionHandle: opts.resumeHandle,
      initialHistoryInClientContent: opts.seeded,
    });
  }

  /** The first frame of a connection. The model comes from the adapter. */
  setupMessage(opts: Omit<GeminiSetupOptions, "model"> = {}): string {
    return JSON.stringify(encodeSetup({ ...opts, model: this.model }));
  }

  /** Accepts text and binary frames alike: the service sends JSON in binary frames. */
  decode(frame: string | ArrayBuffer | Uint8Array): DecodeResult {
    return decodeServerFrame(frame, this.decoder);
  }

  /** Compact JSON text frames (client → server frames stay text; O4). */
  encode(cmd: ModelCommand): string[] {
    return encodeCommand(cmd, this.capabilities, this.rules).map((msg) => JSON.stringify(msg));
  }

  /**
   * A frame seeding a fresh connection with the rebuilt history (text only), or none if it is
   * empty. The setup of a seeded connection must say so (`historyConfig`, see encodeSetup).
   */
  encodeContext(ctx: RebuiltContext): string[] {
    if (ctx.items.length === 0) return [];
    return [JSON.stringify(this.seed(ctx))];
  }

  classifyClose(code: number): CloseClass {
    return classifyClose(code);
  }
}
