import type {
  HistoryEvent,
  HistoryEventBody,
  ToolOutcome,
  ToolPayload,
} from "../vocabulary/log-events.js";
import { RESTART_REASON } from "../vocabulary/model.js";
import { archiveSettledCalls } from "./call-archive.js";
import { transferHandoff } from "./handoff.js";
import type { RerunCall } from "./inputs.js";
import {
  type CoreConfig,
  type CoreState,
  initialState,
  RESTORED_BATCH,
  type TurnState,
} from "./session-state.js";

/**
 * Of a log's events, the ones a restore reads: every call, outcome and handoff,
 * the last status, and the last user turn with the turn ends after it. Restoring from these
 * gives the same state and the same closing events as from all of them (turn ids grow, so
 * the last user turn is the highest; only the last status counts; only the last user turn
 * can be open) — a property test holds the two to that. The store reads the same selection
 * through indexes (HistoryStore.readForRestore), so a restore costs the session's calls, not
 * its turns.
 */
export function restoreSelection(events: readonly HistoryEvent[]): HistoryEvent[] {
  const lastUser = events.findLastIndex((e) => e.kind === "user");
  const lastStatus = events.findLastIndex((e) => e.kind === "status");
  return events.filter(
    (e, i) =>
      e.kind === "tool_call" ||
      e.kind === "tool_result" ||
      e.kind === "tool_cancelled" ||
      e.kind === "handoff" ||
      i === lastStatus ||
      i === lastUser ||
      (lastUser >= 0 && i > lastUser && (e.kind === "turn_complete" || e.kind === "interrupted")),
  );
}

/**
 * The core's state for a session whose log already holds `events` (a restarted object),
 * after the closing events of `closingEventsAfterRestart` were appended: seq and turn
 * numbering go on, and every call the log knows is settled, so a late or repeated result
 * for one is refused as a duplicate rather than taken for an unknown call. `events` may be
 * the whole log or its `restoreSelection`: the state is the same.
 */
export function restoreState(
  config: CoreConfig,
  events: readonly HistoryEvent[],
  lastSeq: number = events.at(-1)?.seq ?? 0,
  /** What a restart carried over (planRestart): an open turn, calls still running. */
  plan: RestartPlan | null = null,
): CoreState {
  let turnCount = 0;
  for (const e of events) {
    if (e.kind === "user") turnCount = Math.max(turnCount, Number(e.turnId.slice(1)) || 0);
  }
  const state = initialState(config, lastSeq, turnCount);
  // The tool-call cap counts every call of the session (the restore reads them all).
  state.toolCallCount = events.filter((e) => e.kind === "tool_call").length;
  // A goodbye under way when the object died (the last turn is the restore's): not a turn
  // the turns cap counts.
  if (lastTurnIsGoodbye(events)) state.limitTurns = 1;
  // A session that ended (or failed for good) stays ended across restarts.
  const lastStatus = events.findLast((e) => e.kind === "status");
  if (lastStatus?.kind === "status" && lastStatus.state === "ended") state.ended = true;
  // The agent that speaks now: the last handoff's; a transfer answered but not yet in effect
  // (the object died in between) still takes effect.
  const handedOff = new Set<string>();
  for (const e of events) {
    if (e.kind !== "handoff") continue;
    state.agent = e.to;
    if (e.callId !== undefined) handedOff.add(e.callId);
  }
  for (const e of events) {
    if (e.kind !== "tool_result" || handedOff.has(e.callId)) continue;
    // The logged result as the call's outcome (the log holds exactly one of the two).
    const outcome: ToolOutcome =
      e.error !== undefined ? { error: e.error } : { result: e.result ?? {} };
    const pending = transferHandoff(
      state,
      { id: e.callId, name: e.name, turnId: e.turnId },
      outcome,
    );
    if (pending !== null) state.pendingHandoff = pending;
  }
  for (const e of events) {
    if (e.kind === "tool_call") {
      state.calls[e.callId] = {
        id: e.callId,
        name: e.name,
        turnId: e.turnId,
        runOn: e.runOn,
        followUp: config.tools[e.name]?.followUp ?? "speak",
        status: "cancelled",
        delivery: "withheld",
        batch: RESTORED_BATCH,
      };
    } else if (e.kind === "tool_result") {
      const call = state.calls[e.callId];
      if (call) call.status = "answered";
    }
  }
  if (plan !== null) carryPlan(state, events, plan);
  if (plan?.resumeWith != null) state.upstream = { ...state.upstream, handle: plan.resumeWith };
  archiveSettledCalls(state);
  return state;
}

/**
 * The restored state goes on where the old instance stopped: the carried turn is open and
 * waits for the next connection (asked once, carry.ts `resumeCarriedTurn`), and the calls run
 * again or offered again are running, the connection waiting for them (restart.ts).
 */
function carryPlan(state: CoreState, events: readonly HistoryEvent[], plan: RestartPlan): void {
  const running = [...plan.rerun.map((c) => c.callId), ...plan.reoffered];
  for (const id of running) {
    const call = state.calls[id];
    if (call !== undefined) state.calls[id] = { ...call, status: "running", delivery: "pending" };
  }
  if (running.length > 0) state.afterRestart = { calls: running, openWanted: false };
  const user = events.findLast((e) => e.kind === "user" && e.turnId === plan.carriedTurn);
  if (plan.carriedTurn === null || user?.kind !== "user") return;
  const turn: TurnState = {
    id: user.turnId,
    userSeq: user.seq,
    source: user.source,
    // Nothing of its answer was said: the next connection is asked for all of it.
    modelEnded: true,
    hasContent: false,
    resultsSinceContent: 0,
    speakSinceContent: false,
    emptyRetries: 0,
    nudges: 0,
    askedAt: user.at,
    contentSinceAsk: false,
    optionalSlots: 0,
    said: user.text,
    inputKey: undefined,
    awaitingFollowUp: false,
    slowWaits: 0,
    waitedAt: 0,
    carried: "pending",
    ...(plan.askAgain ? { askAgain: true as const } : {}),
  };
  state.turn = turn;
  state.lastTurnId = turn.id;
}

/** Speech the user had finished when the object went away, not yet a turn (the shell kept it). */
export interface UnansweredSpeech {
  /** What the model had transcribed of it (empty: nothing yet). */
  transcript: string;
  /** When it was kept (ms since the epoch). */
  at: number;
}

/** What a restart may carry over, besides the log's structural events. */
export interface RestartCarry {
  /** The log from the last user turn on, every event (its words included). */
  tail: readonly HistoryEvent[];
  /** Speech kept when the object went away, or null. */
  speech: UnansweredSpeech | null;
  /**
   * The timeout of a run again of the tool `name`, if it may run again with its key (its
   * policy's `idempotent`), else null.
   */
  rerunTimeoutMs(name: string): number | null;
  /**
   * The model's resumption handle, when nothing but status changes was logged since it was
   * issued (it covers the whole conversation), else null.
   */
  resumeHandle: string | null;
}

/** What a restarted session does about what was in flight when its object went away. */
export interface RestartPlan {
  /** Appended before anything else happens (their frames go to the clients still there). */
  closing: HistoryEventBody[];
  /** The open turn, carried: the next model connection is asked, once, to answer it. */
  carriedTurn: string | null;
  /** The carried turn is speech that was lost: the user is asked, once, to say it again. */
  askAgain: boolean;
  /** Server calls run again, with the same call id and idempotency key. */
  rerun: RerunCall[];
  /** Client calls left open: a client answers them under the same call id. */
  reoffered: string[];
  /**
   * Nothing was in flight and the model's handle covers the conversation: the next connection
   * resumes the model's session with it (a service that refuses it is seeded from the log).
   */
  resumeWith: string | null;
}

/**
 * What a restarted session does about what was in flight (`carry` null, or the guard
 * `carryTurns` off: closes it all, as `closingEventsAfterRestart` says). With a carry:
 * - a call whose tool may run again with its key is run again (no event now); a client's call
 *   stays open; any other gets `tool_cancelled {reason: "restart"}`, which the model hears as
 *   an outcome it cannot know (it may have happened), never as a failure;
 * - the open turn whose answer had not begun (nothing said since its last call) is carried;
 *   one whose reply was cut mid-way ends `interrupted {reason: "upstream_lost"}` once, its
 *   calls with it, and so does a cap's goodbye, said or not: its line is liveline's own,
 *   hidden, and the cap, found again, asks for a new one (a carried one was answered as an
 *   empty line, then said goodbye again — found by the attack of 2026-12-02);
 * - speech the user had finished that was not yet a turn becomes its turn, carried (its
 *   transcription is the question); with no words of it known, the turn asks the user once to
 *   say it again (a durable `speech_lost` says why).
 */
export function planRestart(
  config: CoreConfig,
  events: readonly HistoryEvent[],
  carry: RestartCarry | null,
): RestartPlan {
  const plan: RestartPlan = {
    closing: [],
    carriedTurn: null,
    askAgain: false,
    rerun: [],
    reoffered: [],
    resumeWith: null,
  };
  if (carry === null || !config.guards.carryTurns) {
    plan.closing = closingEventsAfterRestart(events);
    return plan;
  }
  const { openTurn, openCalls } = inFlight(events);
  // The open turn is the last one the log opened.
  const cut = openTurn !== null && (lastTurnIsGoodbye(events) || replyCut(carry.tail, openTurn));
  for (const [callId, call] of openCalls) {
    const keep = !(cut && call.turnId === openTurn);
    const rerunTimeoutMs = call.runOn === "server" ? carry.rerunTimeoutMs(call.name) : null;
    if (keep && call.runOn === "client") plan.reoffered.push(callId);
    else if (keep && rerunTimeoutMs !== null)
      plan.rerun.push({ callId, name: call.name, args: call.args, timeoutMs: rerunTimeoutMs });
    else
      plan.closing.push({
        kind: "tool_cancelled",
        turnId: call.turnId,
        callId,
        name: call.name,
        reason: RESTART_REASON,
      });
  }
  if (openTurn !== null) {
    if (cut) plan.closing.push({ kind: "interrupted", turnId: openTurn, reason: "upstream_lost" });
    else plan.carriedTurn = openTurn;
    return plan;
  }
  const speech = carry.speech;
  const lastUser = events.findLast((e) => e.kind === "user");
  if (speech === null || (lastUser !== undefined && speech.at < lastUser.at)) {
    // Nothing in flight: the model's own session goes on, where its handle covers it all.
    if (plan.closing.length === 0 && plan.rerun.length === 0 && plan.reoffered.length === 0)
      plan.resumeWith = carry.resumeHandle;
    return plan;
  }
  let turns = 0;
  for (const e of events)
    if (e.kind === "user") turns = Math.max(turns, Number(e.turnId.slice(1)) || 0);
  const turnId = `t${turns + 1}`;
  const transcript = speech.transcript.trim();
  if (transcript === "") {
    plan.closing.push({
      kind: "error",
      code: "speech_lost",
      message: "the session restarted before it answered what was said; please say it again",
      fatal: false,
    });
    plan.askAgain = true;
  }
  plan.closing.push({ kind: "user", turnId, text: transcript, source: "audio" });
  plan.carriedTurn = turnId;
  return plan;
}

/** The log's last turn is a cap's goodbye (its line is liveline's own, `source: "limit"`). */
function lastTurnIsGoodbye(events: readonly HistoryEvent[]): boolean {
  return events.findLast((e) => e.kind === "user")?.source === "limit";
}

/** The open turn (the last user turn, if it has no end) and the calls without an outcome. */
function inFlight(events: readonly HistoryEvent[]): {
  openTurn: string | null;
  openCalls: Map<
    string,
    { turnId: string; name: string; runOn: "server" | "client"; args: ToolPayload }
  >;
} {
  const openCalls = new Map<
    string,
    { turnId: string; name: string; runOn: "server" | "client"; args: ToolPayload }
  >();
  let openTurn: string | null = null;
  for (const e of events) {
    switch (e.kind) {
      case "user":
        openTurn = e.turnId;
        break;
      case "turn_complete":
      case "interrupted":
        if (openTurn === e.turnId) openTurn = null;
        break;
      case "tool_call":
        openCalls.set(e.callId, { turnId: e.turnId, name: e.name, runOn: e.runOn, args: e.args });
        break;
      case "tool_result":
      case "tool_cancelled":
        openCalls.delete(e.callId);
        break;
      default:
        break;
    }
  }
  return { openTurn, openCalls };
}

/** The turn's reply was under way: the model said words after its last call (or with none). */
function replyCut(tail: readonly HistoryEvent[], turnId: string): boolean {
  const lastCall = tail.findLastIndex((e) => e.kind === "tool_call" && e.turnId === turnId);
  return tail.some(
    (e, i) =>
      i > lastCall && (e.kind === "model_text" || e.kind === "transcript") && e.turnId === turnId,
  );
}

/**
 * What a session object that restarted (evicted, crashed, redeployed) appends before it goes
 * on: the model connection and every running tool died with the old instance, so the open
 * turn ends with `interrupted` (upstream_lost) and each call without an outcome is recorded
 * as cancelled. The log stays valid and pairable; clients see an honest end, never silence.
 */
export function closingEventsAfterRestart(events: readonly HistoryEvent[]): HistoryEventBody[] {
  const closing: HistoryEventBody[] = [];
  const openCalls = new Map<string, { turnId: string; name: string }>();
  let openTurn: string | null = null;
  for (const e of events) {
    switch (e.kind) {
      case "user":
        openTurn = e.turnId;
        break;
      case "turn_complete":
      case "interrupted":
        if (openTurn === e.turnId) openTurn = null;
        break;
      case "tool_call":
        openCalls.set(e.callId, { turnId: e.turnId, name: e.name });
        break;
      case "tool_result":
      case "tool_cancelled":
        openCalls.delete(e.callId);
        break;
      default:
        break;
    }
  }
  for (const [callId, call] of openCalls) {
    closing.push({
      kind: "tool_cancelled",
      turnId: call.turnId,
      callId,
      name: call.name,
      reason: "restart",
    });
  }
  if (openTurn !== null)
    closing.push({ kind: "interrupted", turnId: openTurn, reason: "upstream_lost" });
  return closing;
}
