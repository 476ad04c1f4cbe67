import type {
  ModelCapabilities,
  ModelCommand,
  ModelEvent,
  ToolCallRequest,
} from "../../src/vocabulary/model.js";

/**
 * A small reference model of how a live provider behaves, for property tests of the core.
 * It is deliberately faithful to the failures seen in the field (DESIGN.md):
 * - a tool response that reaches it after its generation ended is new input: a side-effect
 *   (silent) tool's result makes it regenerate its previous reply word for word; an
 *   informational (speak) result makes it speak the result;
 * - a SILENT response to a non-blocking call adds to context quietly, unless the
 *   capability record says SILENT is not honoured;
 * - the fire-and-forget race: a call followed by turn_complete in the same instant;
 * - empty replies after tool results; the same call delivered twice;
 * - text input interrupts the running generation (interrupted, then turn_complete).
 * - an honest model answers the same input with the same words (issue 28): an answer's text
 *   is made from the input it answers, so the same question asked again gets the same reply;
 *   other content strings are unique per generation, so any other text seen twice is a
 *   regenerated reply;
 * - a model that cannot respond on its own (`responsesOnRequest`, OpenAI) never regenerates:
 *   nothing starts a response but a request; it shows it is working when a response begins.
 * - a model without turns (`turnless`, GPT-Live): nothing ends what it says and nothing cuts
 *   it; it speaks (transcript) each answer in full, in the order asked, one after the other;
 *   every reply it gives was asked for (a line, results, a nudge) and says so as it begins
 *   and ends (`reply_ready`, `reply_done`: as the adapter reads the backend response that
 *   liveline's `response.create` started); a reply that stalls never ends;
 *   its backend stops at its calls and goes on only when the outputs that complete them ask
 *   it to (a result that speaks or lets the reply go on), as the adapter sends them.
 */

/** How real replies open: honest answers to different questions often start alike. */
export const REAL_OPENINGS = [
  "",
  "Sure. You said: ",
  "Sure! ",
  "Okay, so ",
  "Great question — ",
  "Of course. Here is what I found: ",
  "Let me think about that for a moment. ",
];

export interface GenerationPlan {
  /** Tools the model calls in this generation (by name). */
  calls: string[];
  /** The words its reply opens with (from REAL_OPENINGS). */
  opening: string;
  /**
   * How the model answers the input: normally; not at all (silence); with a turn_complete
   * and no content; or by starting and then stopping mid-reply with no turn_complete.
   */
  reply: "normal" | "none" | "empty" | "stall";
  /** Fire-and-forget: turn_complete right after the calls, without waiting. */
  race: boolean;
  /** After the tool results come in, reply with nothing. */
  emptyAfterTools: boolean;
  /** Deliver the calls twice (as a functionCall part and as toolCall). */
  duplicateCallDelivery: boolean;
}

export const PLAIN: GenerationPlan = {
  calls: [],
  opening: "",
  reply: "normal",
  race: false,
  emptyAfterTools: false,
  duplicateCallDelivery: false,
};

interface Generation {
  id: number;
  /** What its texts are made from: the input it answers (the same input, the same words). */
  label: string;
  /** The texts of this generation, for regeneration. */
  texts: string[];
  /** Calls this generation waits for before it goes on (blocking ones). */
  waitingFor: Set<string>;
  /** Speak results received while waiting, to be spoken when it goes on. */
  toSpeak: string[];
  emptyAfterTools: boolean;
  ended: boolean;
  /** It ended by its own turn_complete (not interrupted, not lost with the connection). */
  completed: boolean;
  callIds: string[];
  /** Its turn_complete, to tell whether it reached the core before a drop. */
  endEvent?: ModelEvent;
  /** The outputs that completed its calls asked it to go on (turnless: only then does it). */
  continueAsked: boolean;
}

/** The generation that answered one user input, as the model produced it. */
export interface Answer {
  input: string;
  gen: Generation | null;
  /** The turn the line was sent as (its command's `turnId`), where the core said. */
  turnId?: string | undefined;
}

export class ReferenceModel {
  /** Events ready to be delivered to the core, in order. */
  readonly out: ModelEvent[] = [];
  /** Every user input received, with the generation that answered it. */
  readonly answers: Answer[] = [];
  connected = false;
  private genCount = 0;
  private callCount = 0;
  private active: Generation | null = null;
  private lastReplyTexts: string[] = [];
  /** Calls issued, with the generation that issued them and whether they are answered. */
  private calls = new Map<
    string,
    { gen: Generation; name: string; answered: boolean; nonBlocking: boolean }
  >();
  /** Speak results the model has received but not yet spoken (for nudges). */
  private unspoken: string[] = [];
  /** What a resumed session knows, per handle issued. */
  private snapshots = new Map<string, { reply: string[]; unspoken: string[] }>();
  /** Late speak results whose follow-up has not been said yet. */
  private lateUnspoken: string[] = [];
  /** Planned empty replies to nudges still to give. */
  emptyNudgeReplies = 0;
  /** Ignore SILENT even where the capability record says it is honoured (field report O2). */
  ignoresSilent = false;
  /** Late speak results still to be met with silence (no follow-up until nudged). */
  silentLateFollowUps = 0;
  /** The plan each input was first answered with: the same question, the same answer. */
  private plansByInput = new Map<string, GenerationPlan>();
  handleCount = 0;
  /** Reactions to late responses that wait for the running generation to end (WHEN_IDLE). */
  private deferred: Array<() => void> = [];
  /** A turnless model's reply has begun and not ended on the wire. */
  private replyOpen = false;
  /**
   * Each reply names the request it answers (`reply_ready.turnId`), as the adapter pairs them.
   * False only for the control: an adapter that could not tell.
   */
  pairsReplies = true;

  constructor(
    readonly caps: ModelCapabilities,
    readonly followUp: (tool: string) => "silent" | "speak",
    private readonly nextPlan: () => GenerationPlan,
  ) {}

  private declaredNonBlocking(tool: string): boolean {
    return this.caps.nonBlockingCalls && this.followUp(tool) === "silent";
  }

  private get turnless(): boolean {
    return this.caps.turnless === true;
  }

  /**
   * A new connection. Resumed, the model knows what it knew when the handle was issued;
   * seeded from the log instead, its previous reply is the last one in the log, and the
   * results it has to speak are those the log has not seen spoken.
   */
  connect(from: { handle: string } | { reply: string[]; unspoken: string[] }): void {
    // Resumed, it is where it was when the handle was issued (what it heard or said after
    // that is not in the resumed session).
    const context = "handle" in from ? this.snapshots.get(from.handle) : from;
    if (context !== undefined) {
      this.lastReplyTexts = [...context.reply];
      this.unspoken = [...context.unspoken];
    }
    this.connected = true;
    this.active = null;
    this.deferred = [];
    this.replyOpen = false;
    this.out.push({ type: "setup_complete" });
  }

  /**
   * Results it had and had not spoken yet stay in its context (a resumed session keeps them;
   * a seeded one gets them from the log): a nudge on the next connection speaks them.
   */
  private keepUnspoken(): void {
    // A generation whose end was still on the wire never reached the core: lost with it.
    for (const { gen } of this.answers)
      if (gen?.endEvent && this.out.includes(gen.endEvent)) gen.completed = false;
    if (this.active && !this.active.ended) this.unspoken.push(...this.active.toSpeak);
    this.unspoken.push(...this.lateUnspoken);
    this.lateUnspoken = [];
  }

  /** The connection drops: whatever was in flight is gone. */
  drop(code: number): void {
    this.keepUnspoken();
    this.connected = false;
    this.active = null;
    this.deferred = [];
    this.out.length = 0;
    // The Gemini adapter's reading of the code (1007/1008: retrying cannot help).
    this.out.push({
      type: "upstream_closed",
      code,
      reason: "dropped",
      fatal: code === 1007 || code === 1008,
    });
  }

  close(): void {
    this.keepUnspoken();
    this.connected = false;
    this.active = null;
    this.deferred = [];
    this.out.length = 0;
  }

  receive(command: ModelCommand): void {
    if (!this.connected) return;
    switch (command.type) {
      case "user_text": {
        this.interruptActive();
        const plan = this.plansByInput.get(command.text) ?? this.nextPlan();
        this.plansByInput.set(command.text, plan);
        const answer: Answer = { input: command.text, gen: null, turnId: command.turnId };
        this.answers.push(answer);
        if (plan.reply === "none") return;
        // Nothing cuts a turnless model: it answers once what it is saying is said.
        this.whenIdleOrNow(() => {
          answer.gen = this.startGeneration(plan, command.text, command.turnId);
        });
        return;
      }
      case "nudge":
        this.interruptActive();
        this.whenIdleOrNow(() => this.answerNudge(command.turnId, command.text));
        return;
      case "user_audio":
      case "audio_end":
      case "audio_played":
      case "end_session":
        return;
      case "tool_responses":
        this.onResponses(
          command.responses.map((r) => ({ callId: r.callId, silent: r.scheduling === "silent" })),
          command.turnId,
        );
        return;
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  }

  private interruptActive(): void {
    const gen = this.active;
    if (!gen || gen.ended || this.turnless) return;
    const pending = gen.callIds.filter((id) => !this.calls.get(id)?.answered);
    if (pending.length > 0) this.out.push({ type: "tool_call_cancellation", ids: pending });
    for (const id of pending) this.calls.delete(id);
    this.out.push({ type: "interrupted" }, { type: "turn_complete" });
    gen.ended = true;
    this.active = null;
  }

  /** `asked`: the turn of the request it answers (handed back as a turnless model's reply begins). */
  private newGen(
    emptyAfterTools: boolean,
    asked: string | undefined,
    label = `g${this.genCount + 1}`,
  ): Generation {
    this.genCount++;
    if (this.caps.responsesOnRequest) this.out.push({ type: "working" });
    // Every reply of a turnless model was asked for: it says so, and by what, as it begins.
    if (this.turnless) this.beginReply(asked);
    const gen: Generation = {
      id: this.genCount,
      label,
      texts: [],
      waitingFor: new Set(),
      toSpeak: [],
      emptyAfterTools,
      ended: false,
      completed: false,
      callIds: [],
      continueAsked: false,
    };
    this.active = gen;
    return gen;
  }

  private beginReply(asked: string | undefined): void {
    this.replyOpen = true;
    this.out.push({ type: "reply_ready", turnId: this.pairsReplies ? asked : undefined });
  }

  private endReply(): void {
    if (!this.replyOpen) return;
    this.replyOpen = false;
    this.out.push({ type: "reply_done" });
  }

  private say(gen: Generation, text: string): void {
    gen.texts.push(text);
    // A turnless model speaks: its words come as the transcript of its speech.
    this.out.push(
      this.turnless ? { type: "transcript_delta", text } : { type: "text_delta", text },
    );
  }

  private endGeneration(gen: Generation, rememberReply: boolean): void {
    gen.ended = true;
    gen.completed = true;
    if (this.active === gen) this.active = null;
    if (rememberReply && gen.texts.length > 0) this.lastReplyTexts = [...gen.texts];
    if (this.turnless) {
      // Nothing marks its end but its reply's: what it said reached the core once that did.
      this.endReply();
      gen.endEvent = this.out.at(-1);
      this.deferred.shift()?.();
      return;
    }
    gen.endEvent = { type: "turn_complete" };
    this.out.push(gen.endEvent);
    const pendingCalls = [...this.calls.values()].some((c) => !c.answered);
    if (!pendingCalls) {
      this.handleCount++;
      const handle = `h${this.handleCount}`;
      this.snapshots.set(handle, { reply: [...this.lastReplyTexts], unspoken: [...this.unspoken] });
      this.out.push({ type: "resumption_update", handle, resumable: true });
    }
    this.deferred.shift()?.();
  }

  /** Late input is taken when the model is idle, after the generation it is in. */
  private whenIdle(reaction: () => void): void {
    if (this.active && !this.active.ended) this.deferred.push(reaction);
    else reaction();
  }

  /** New input: after what a turnless model is saying; at once on one that it interrupted. */
  private whenIdleOrNow(reaction: () => void): void {
    if (this.turnless) this.whenIdle(reaction);
    else reaction();
  }

  private startGeneration(
    plan: GenerationPlan,
    input: string,
    asked: string | undefined,
  ): Generation {
    const gen = this.newGen(plan.emptyAfterTools, asked, `a(${input})`);
    if (plan.reply === "empty") {
      this.endGeneration(gen, false);
      return gen;
    }
    this.say(gen, `${plan.opening}${gen.label}:hello`);
    if (plan.reply === "stall") {
      // No more, and no turn_complete: it hangs (a turnless model's end shows no different:
      // it is not taken for a complete answer, and what was asked after it still comes).
      if (this.turnless) {
        gen.ended = true;
        this.active = null;
        this.deferred.shift()?.();
      }
      return gen;
    }
    if (plan.calls.length === 0) {
      this.endGeneration(gen, true);
      return gen;
    }
    const requests: ToolCallRequest[] = plan.calls.map((name) => {
      this.callCount++;
      const id = `c${this.callCount}`;
      const nonBlocking = this.declaredNonBlocking(name);
      this.calls.set(id, { gen, name, answered: false, nonBlocking });
      gen.callIds.push(id);
      // A turnless model's backend stops at its calls, whatever they are.
      if (!nonBlocking || this.caps.turnCompleteWaitsForResults || this.turnless)
        gen.waitingFor.add(id);
      return { id, name, args: { n: this.callCount } };
    });
    this.out.push({ type: "tool_call", calls: requests });
    if (plan.duplicateCallDelivery) this.out.push({ type: "tool_call", calls: requests });
    // A turnless model's backend stops at its calls: that reply is over.
    if (this.turnless) this.endReply();
    if (plan.race && !this.caps.turnCompleteWaitsForResults && !this.turnless) {
      // Fire-and-forget: the model ends its turn in the same instant.
      gen.waitingFor.clear();
      this.endGeneration(gen, true);
      return gen;
    }
    if (gen.waitingFor.size === 0) this.goOn(gen);
    return gen;
  }

  /** Everything the generation waited for arrived: it says the rest of its reply. */
  private goOn(gen: Generation, asked?: string): void {
    if (this.turnless) {
      // Its backend stopped at its calls: it goes on only if asked, in a reply of its own.
      if (!gen.continueAsked) {
        this.unspoken.push(...gen.toSpeak);
        gen.toSpeak = [];
        this.endGeneration(gen, false);
        return;
      }
      this.beginReply(asked);
    }
    if (gen.emptyAfterTools && gen.callIds.length > 0) {
      this.unspoken.push(...gen.toSpeak);
      gen.toSpeak = [];
      this.endGeneration(gen, false);
      return;
    }
    for (const id of gen.toSpeak) this.say(gen, `spoken:${id}`);
    gen.toSpeak = [];
    this.say(gen, `${gen.label}:done`);
    this.endGeneration(gen, true);
  }

  /** One toolResponse message: what arrives late is one new input, answered by one generation. */
  private onResponses(
    responses: { callId: string; silent: boolean }[],
    asked: string | undefined,
  ): void {
    const lateSpeak: string[] = [];
    let lateSideEffect = false;
    // A turnless model's backend goes on if the outputs that complete its calls ask it to.
    const goesOn = new Set<Generation>();
    for (const { callId, silent } of responses) {
      const call = this.calls.get(callId);
      if (!call || call.answered) continue; // unknown ids and second answers are ignored
      call.answered = true;
      const gen = call.gen;
      const speak = this.followUp(call.name) === "speak";
      if (!gen.ended && this.active === gen) {
        if (speak) gen.toSpeak.push(callId);
        if (!silent) goesOn.add(gen);
        if (gen.waitingFor.delete(callId) && gen.waitingFor.size === 0) {
          gen.continueAsked = goesOn.has(gen);
          this.goOn(gen, asked);
        }
        continue;
      }
      // The generation that called it has ended: the response is new input.
      // A model that responds only when asked takes a result with no request quietly.
      const quiet =
        (this.caps.responsesOnRequest && silent) ||
        (call.nonBlocking &&
          silent &&
          this.caps.resultScheduling &&
          this.caps.silentHonoured &&
          !this.ignoresSilent);
      if (quiet) continue;
      if (speak) lateSpeak.push(callId);
      else lateSideEffect = true;
    }
    if (lateSpeak.length > 0 && this.silentLateFollowUps > 0) {
      // It says nothing for them (an empty reply the turn watchdog nudges): they wait unspoken.
      this.silentLateFollowUps--;
      this.unspoken.push(...lateSpeak);
    } else if (lateSpeak.length > 0) {
      this.lateUnspoken.push(...lateSpeak);
      this.whenIdle(() => {
        this.lateUnspoken = this.lateUnspoken.filter((id) => !lateSpeak.includes(id));
        const follow = this.newGen(false, asked);
        for (const id of lateSpeak) this.say(follow, `spoken:${id}`);
        this.endGeneration(follow, true);
      });
    } else if (lateSideEffect) {
      // A side effect's result: the model says its previous reply again, in full.
      this.whenIdle(() => {
        const regen = this.newGen(false, asked);
        for (const text of this.lastReplyTexts) this.say(regen, text);
        this.endGeneration(regen, false);
      });
    }
  }

  private answerNudge(asked: string | undefined, text: string): void {
    const gen = this.newGen(false, asked);
    if (/is still working/.test(text)) {
      // Asked to say a call is still working: a few words, in pieces (results that come
      // meanwhile are new input, answered after them).
      this.say(gen, `${gen.label}:still`);
      this.say(gen, `${gen.label}:working`);
      this.endGeneration(gen, true);
      return;
    }
    if (this.emptyNudgeReplies > 0) {
      this.emptyNudgeReplies--;
      this.endGeneration(gen, false);
      return;
    }
    for (const id of this.unspoken) this.say(gen, `spoken:${id}`);
    this.unspoken = [];
    this.say(gen, `${gen.label}:resumed`);
    this.endGeneration(gen, true);
  }
}
