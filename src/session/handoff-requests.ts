import type { HandoffAnswer } from "../contracts/session-api.js";
import type { SessionInterpreter } from "./interpreter.js";
import type { PendingHandoffStore } from "./pending-handoff-store.js";
import type { SessionAgents } from "./session-agents.js";

/**
 * Handoffs the app's backend (or a server tool) asks for: taken by the core once nothing is
 * in flight, and kept in storage until they are in the log, so that a restart before that
 * asks for them again.
 */
export class HandoffRequests {
  constructor(
    private readonly session: { readonly interpreter: SessionInterpreter },
    private readonly agents: SessionAgents,
    private readonly pending: PendingHandoffStore,
  ) {}

  /**
   * Hands the session to `to` once nothing is in flight (the app's backend or a server tool
   * asks); why it cannot, or null.
   */
  request(to: string, reason: string): HandoffAnswer {
    const state = this.session.interpreter.state;
    if (!this.agents.has(to))
      return {
        problem: `this session cannot hand off to "${to}"; its agents: ${[...this.agents.byName.keys()].join(", ")}`,
      };
    const transfer = state.pendingHandoff;
    if (transfer?.callId !== undefined) {
      // The model's transfer is answered (the model and the clients were told): it stands.
      if (transfer.to === to) return { pending: true };
      return {
        problem: `the model's transfer to "${transfer.to}" (call ${transfer.callId}) is pending; hand off again once it has taken effect`,
      };
    }
    if (to === state.agent && state.pendingHandoff === null)
      return { problem: `"${to}" is already the session's agent` };
    // To the agent that speaks now, with a handoff pending: that handoff is called off.
    const revoked = to === state.agent;
    if (revoked) this.pending.clear();
    else this.pending.set(to, reason);
    this.session.interpreter.handleInput({ type: "handoff_requested", to, reason });
    return { pending: !revoked };
  }

  /** A backend's handoff asked for before the object restarted, and not yet in the log. */
  resume(): void {
    const pending = this.pending.read();
    const { interpreter } = this.session;
    if (
      pending !== null &&
      this.agents.has(pending.agent) &&
      pending.agent !== interpreter.state.agent
    )
      interpreter.handleInput({
        type: "handoff_requested",
        to: pending.agent,
        reason: pending.reason,
      });
    else if (pending !== null) this.pending.clear();
  }
}
