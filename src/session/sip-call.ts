/**
 * A phone call that reached the model service by SIP (OpenAI Realtime: the service took the
 * call, liveline accepted it and is its sideband), as its session's object holds it: the
 * call's line (phone-call-line.ts: hang-up and transfer once the caller has heard the agent's last
 * words, keys gathered into entries) fed by what the sideband says of the call — a key
 * pressed, the model's audio played out to the caller or cut by the caller's speech — and
 * carried out through the service's call control (REFER, hang-up).
 *
 * Nothing here needs to survive the object: after a restart the sideband attaches again, and
 * a goodbye in flight is left to the call (as on a carrier's stream).
 */
import { z } from "zod";
import type { EndReason } from "../metering/closing-record.js";
import type { PhoneCallRecord, TransferOutcome } from "../telephony/carrier-contract.js";
import type { KeypadMode } from "../telephony/keypad.js";
import type { CallSignal, DirectCallService } from "../vocabulary/provider-adapter.js";
import { PhoneCallLine } from "./phone-call-line.js";

/** What a SIP call keeps in its session's `metadata.sip`. */
export const SipCallRecord = z.object({
  /** The service that took the call (its call control and sideband). */
  service: z.literal("openai"),
  callId: z.string().min(1),
  from: z.string(),
  to: z.string(),
});
export type SipCallRecord = z.infer<typeof SipCallRecord>;

/** The session's SIP call, or null when it is none. */
export function sipCallOf(metadata: Record<string, unknown>): SipCallRecord | null {
  const read = SipCallRecord.safeParse(metadata.sip);
  return read.success ? read.data : null;
}

/** What the call needs from its session's object. */
export interface SipCallHost {
  /** A line to the model, as the caller's (recorded like any line). */
  say(text: string): void;
  /** A client tool's outcome, as the call's (the phone has no app to run it). */
  toolResult(callId: string, error: string): void;
  /** Whether an app is connected to the session (it runs client tools). */
  appConnected(): boolean;
  /** Ends the session (its history stays readable). */
  end(reason: EndReason): void;
  /** What the keys typed become under the agent speaking now. */
  keypadMode(): KeypadMode;
  /** The session's call control at the service (its provider's), or null. */
  control(): DirectCallService | null;
  /** Work that must finish though the request that started it has (the object's waitUntil). */
  background(work: Promise<unknown>): void;
  /** Why a hang-up failed (logged; the session ends anyway). */
  warn(message: string): void;
}

/** What the session tells the call, from its log and its sideband (LiveSession's watcher). */
export interface CallWatcher {
  signals(signals: readonly CallSignal[]): void;
  turnEnded(): void;
  clientToolCall(callId: string, name: string): void;
  /** The service says the call is over (its sideband refused). */
  callOver(): void;
}

/** A session end after which the call is gone anyway (no hang-up is sent). */
const CALL_GONE: ReadonlySet<EndReason> = new Set([
  "transferred",
  "caller_hung_up",
  "carrier_ended",
]);

export class SipCall implements CallWatcher {
  readonly line: PhoneCallLine;
  /** The model's audio is playing to the caller (started, not yet played out or cut). */
  private playing = false;
  /** The call is over or being ended: nothing more is sent for it. */
  private over = false;

  constructor(
    readonly record: SipCallRecord,
    private readonly host: SipCallHost,
  ) {
    const call: PhoneCallRecord = { carrier: "openai-sip", from: record.from, to: record.to };
    this.line = new PhoneCallLine(
      {
        ...call,
        id: record.callId,
        // The call's media is the service's: this is only what the line reports.
        audio: "g711_ulaw",
        transferProblem: () =>
          host.control()?.refer === undefined
            ? "this session's model service cannot transfer its SIP calls"
            : null,
        transfer: (number) => this.refer(number),
      },
      {
        say: (text) => host.say(text),
        end: (reason) => this.end(reason),
        drained: () => !this.playing,
        keypadMode: () => host.keypadMode(),
      },
    );
  }

  signals(signals: readonly CallSignal[]): void {
    for (const signal of signals) {
      switch (signal.kind) {
        case "key":
          this.line.pressed(signal.digit);
          break;
        case "playing":
          this.playing = true;
          break;
        case "played_out":
          this.playing = false;
          this.line.drained();
          break;
        case "cut":
          this.playing = false;
          this.line.cut();
          break;
        default: {
          const unreachable: never = signal;
          throw new Error(`unknown call signal ${JSON.stringify(unreachable)}`);
        }
      }
    }
  }

  /** A turn ended: its goodbye, if it was one, is heard once its audio has played out. */
  turnEnded(): void {
    this.line.turnEnded();
    // A reply with no audio playing (none, or all played already) leaves at once.
    if (!this.playing) queueMicrotask(() => this.line.drained());
  }

  /**
   * A client tool asked of the call: answered at once where no app is connected to run it,
   * so the turn does not wait out the tool's timeout (as on a carrier's call).
   */
  clientToolCall(callId: string, name: string): void {
    if (this.host.appConnected()) return;
    queueMicrotask(() =>
      this.host.toolResult(callId, `${name} runs in an app, and this phone call has none`),
    );
  }

  callOver(): void {
    if (this.over) return;
    this.over = true;
    this.line.dispose();
    this.host.end("caller_hung_up");
  }

  /**
   * The session is ending (by any door): the line stops, and a call still up is hung up —
   * the model would otherwise talk on with nobody to run its tools.
   */
  ending(reason: EndReason): void {
    this.line.dispose();
    if (this.over) return;
    this.over = true;
    if (CALL_GONE.has(reason)) return;
    const hangUp = this.host.control()?.hangUp;
    if (hangUp === undefined) return;
    this.host.background(
      hangUp(this.record.callId).catch((err: unknown) =>
        this.host.warn(`hanging up SIP call ${this.record.callId}: ${String(err)}`),
      ),
    );
  }

  /** The line's end: the agent hung up (after its goodbye was heard) or the call was moved. */
  private end(reason: "agent_hung_up" | "transferred"): void {
    this.host.end(reason);
  }

  private async refer(number: string): Promise<TransferOutcome> {
    const refer = this.host.control()?.refer;
    if (refer === undefined) return { ok: false, problem: "no call control" };
    return refer(this.record.callId, `tel:${number}`);
  }
}
