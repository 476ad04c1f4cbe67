/**
 * What a phone call's session does beyond what a protocol client's does, for the session's
 * object: it ends or transfers the call once the caller has heard the agent's last words (the
 * carrier's marks say so), and it gathers the keys the caller types into entries.
 *
 * Nothing here needs to survive the object: a crash ends the call's stream with it. Typed
 * entries a tool has not read yet are kept in memory for the same reason.
 */
import type { PhoneCall } from "../agents/define.js";
import type { CarrierCall } from "../telephony/carrier-contract.js";
import { ENTRY_PAUSE_MS, entryLine, Keypad, type KeypadMode } from "../telephony/keypad.js";
import { requireE164 } from "../telephony/phone-number.js";

/** What the model is told when a call's audio starts (the caller waits to be greeted). */
export const CALL_CONNECTED = "(The caller is on the line. Greet them.)";

/** What the call's line needs from its session's object. */
export interface CallLineHost {
  /** A line to the model, as the caller's (it is recorded like any line). */
  say(text: string): void;
  /** Ends the call's session (its history stays readable); the stream is closed with it. */
  end(reason: "agent_hung_up" | "transferred"): void;
  /** Whether every stream of the call has played the last turn's reply through. */
  drained(): boolean;
  /** What the keys typed become under the agent speaking now. */
  keypadMode(): KeypadMode;
}

/** The call's last act, once the caller has heard the turn's reply. */
type Leaving = { kind: "hang_up" } | { kind: "transfer"; number: string };

export class PhoneCallLine {
  /**
   * Asked by a tool: `asked` until the turn of its goodbye ends, then `goodbye_said` until the
   * caller has heard it; `transferring` while the carrier is asked to transfer the call.
   */
  private leaving: { act: Leaving; phase: "asked" | "goodbye_said" | "transferring" } | null = null;
  private readonly keypad = new Keypad();
  private entryTimer: ReturnType<typeof setTimeout> | null = null;
  /** The latest entry typed that no tool has read (a newer one replaces it: a retyped PIN). */
  private unreadEntry: string | null = null;
  /** The session has ended: nothing more is said, ended or transferred. */
  private disposed = false;

  /** The call as its session's tools see it (`ctx.phoneCall`). */
  readonly phoneCall: PhoneCall;

  constructor(
    private readonly carrierCall: CarrierCall,
    private readonly host: CallLineHost,
  ) {
    this.phoneCall = {
      from: carrierCall.from,
      to: carrierCall.to,
      end: () => this.leaveAfterReply({ kind: "hang_up" }),
      transfer: (number) => {
        requireE164(number);
        this.leaveAfterReply({ kind: "transfer", number });
      },
      takeKeys: () => {
        const entry = this.unreadEntry;
        this.unreadEntry = null;
        return entry;
      },
    };
  }

  /** A turn of the session ended (its reply may still be playing). */
  turnEnded(): void {
    if (this.leaving?.phase === "asked") this.leaving.phase = "goodbye_said";
  }

  /**
   * The caller spoke over the agent's last line (its playback was cleared): it was not heard
   * through, so the call does not leave on it — the caller may be saying "no, wait". The
   * model is told, and may end or transfer the call again.
   */
  cut(): void {
    const leaving = this.leaving;
    if (this.disposed || leaving === null || leaving.phase === "transferring") return;
    this.leaving = null;
    const line =
      leaving.act.kind === "hang_up"
        ? "(the caller spoke over your goodbye: the call goes on)"
        : `(the caller spoke over your line: the transfer to ${leaving.act.number} was not made)`;
    // Said after the step that cut the reply, not inside it.
    queueMicrotask(() => {
      if (!this.disposed) this.host.say(line);
    });
  }

  /** A stream has played all it was sent: the call leaves if its goodbye has been heard. */
  drained(): void {
    const leaving = this.leaving;
    if (this.disposed || leaving?.phase !== "goodbye_said" || !this.host.drained()) return;
    switch (leaving.act.kind) {
      case "hang_up":
        this.host.end("agent_hung_up");
        // Its stream is closed with the session; a carrier that may go on with the call after
        // that is also told to end it (a REST call with a deadline; a failure changes nothing).
        void this.carrierCall.end?.();
        return;
      case "transfer":
        leaving.phase = "transferring";
        void this.transfer(leaving.act.number);
        return;
      default: {
        const unreachable: never = leaving.act;
        throw new Error(`unknown call act ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** A key the caller pressed: an entry ends at # or after a pause. */
  pressed(digit: string): void {
    if (this.entryTimer !== null) clearTimeout(this.entryTimer);
    this.entryTimer = null;
    const entry = this.keypad.press(digit);
    if (entry !== null) {
      this.entryTyped(entry);
      return;
    }
    this.entryTimer = setTimeout(() => {
      this.entryTimer = null;
      const paused = this.keypad.pause();
      if (paused !== null) this.entryTyped(paused);
    }, ENTRY_PAUSE_MS);
  }

  /** The session is going away: no entry is said, and the call neither ends nor transfers. */
  dispose(): void {
    this.disposed = true;
    this.leaving = null;
    if (this.entryTimer !== null) clearTimeout(this.entryTimer);
    this.entryTimer = null;
  }

  private entryTyped(entry: string): void {
    if (this.disposed) return;
    const mode = this.host.keypadMode();
    if (mode === "tools") this.unreadEntry = entry;
    this.host.say(entryLine(entry, mode));
  }

  private leaveAfterReply(act: Leaving): void {
    if (act.kind === "transfer") {
      if (this.carrierCall.demo === true)
        throw new Error("a demo page's call cannot be transferred");
      const problem = this.carrierCall.transferProblem();
      if (problem !== null) throw new Error(problem);
    }
    this.leaving = { act, phase: "asked" };
  }

  /** Asks the carrier to move the call to `number`; the session ends when it took it. */
  private async transfer(number: string): Promise<void> {
    const outcome = await this.carrierCall.transfer(number);
    this.leaving = null;
    if (this.disposed) return;
    if (outcome.ok) {
      // The carrier stops the media stream as the call leaves <Connect>.
      this.host.end("transferred");
      return;
    }
    // The caller is still on the line: the model hears why, and can say so.
    this.host.say(
      `(the transfer to ${number} failed: ${outcome.problem}; the caller is still on the line)`,
    );
  }
}
