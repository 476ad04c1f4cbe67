import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { Guards } from "../../src/core/session-state.js";
import { type Client, connect, createSession, type Frame, httpUrl } from "./gateway.js";

/** A session against the built-in simulator with the given knobs, and a client on it. */
export async function simulatorSession(
  knobs: Record<string, string | number | boolean>,
  extra: Record<string, unknown> = {},
): Promise<{ sessionId: string; token: string; wsUrl: string; client: Client; ready: Frame }> {
  const created = await createSession({
    provider: "simulator",
    metadata: { simulator: { timeScale: 0, ...knobs }, ...extra },
  });
  const client = await connect(httpUrl(created.wsUrl));
  const ready = await client.next();
  expect(ready.type).toBe("ready");
  return { ...created, client, ready };
}

/**
 * Plays the phone's side of a turn: answers client tool calls as they come, collects every
 * frame until the turn ends, then keeps listening for `settleMs` to catch anything the model
 * says after the turn (a regenerated reply, a second turn end).
 */
export async function playTurn(
  client: Client,
  text: string,
  opts: { settleMs?: number; answer?: (call: Frame) => Record<string, unknown> | null } = {},
): Promise<Frame[]> {
  const frames: Frame[] = [];
  client.send({ type: "text", text });
  let ended = false;
  const deadline = Date.now() + 10_000;
  for (;;) {
    let frame: Frame;
    try {
      frame = await client.next(ended ? (opts.settleMs ?? 60) : Math.max(1, deadline - Date.now()));
    } catch {
      if (ended) return frames;
      throw new Error(`the turn did not end; frames: ${JSON.stringify(frames.map((f) => f.type))}`);
    }
    frames.push(frame);
    if (frame.type === "tool_call" && frame.runOn === "client") {
      const result = opts.answer ? opts.answer(frame) : { shown: true };
      if (result) client.send({ type: "tool_result", callId: frame.callId, result });
    }
    if (frame.type === "turn_complete" || frame.type === "interrupted") ended = true;
  }
}

/**
 * Every frame until turn `turnId` ends (turn_complete or interrupted), inclusive. `answer`:
 * the result to send for each client tool call of that turn (none: calls stay unanswered).
 */
export async function framesUntilTurnEnds(
  client: Client,
  turnId: string,
  answer?: Record<string, unknown>,
): Promise<Frame[]> {
  const frames: Frame[] = [];
  for (;;) {
    const f = await client.next(10_000);
    frames.push(f);
    if (answer && f.type === "tool_call" && f.turnId === turnId && f.runOn === "client")
      client.send({ type: "tool_result", callId: f.callId, result: answer });
    if ((f.type === "turn_complete" || f.type === "interrupted") && f.turnId === turnId)
      return frames;
  }
}

export const textsOf = (frames: Frame[]) =>
  frames.filter((f) => f.type === "text").map((f) => f.text as string);
export const turnEndsOf = (frames: Frame[]) =>
  frames.filter((f) => f.type === "turn_complete" || f.type === "interrupted");

/** A reply generated twice: the same text forwarded twice, or more than one turn end. */
export function duplicated(frames: Frame[]): boolean {
  const texts = textsOf(frames);
  return new Set(texts).size !== texts.length || turnEndsOf(frames).length !== 1;
}

/** Every frame until one matches `pred`, inclusive (each awaited at most `ms`). */
export async function framesUntil(
  client: Client,
  pred: (f: Frame) => boolean,
  ms = 5000,
): Promise<Frame[]> {
  const frames: Frame[] = [];
  for (;;) {
    const f = await client.next(ms);
    frames.push(f);
    if (pred(f)) return frames;
  }
}

/**
 * Runs `change` on the session's running LiveSession, inside its object (a control's arm:
 * `Live` is the part of it the caller reaches into).
 */
export async function inLiveSession<Live>(
  sessionId: string,
  change: (live: Live) => void,
): Promise<void> {
  const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
  await runInDurableObject(stub, (instance: unknown) => {
    change((instance as { running: { live: Live } }).running.live);
  });
}

/** One of the running session's protections switched off (a control's arm). */
export async function switchOffGuard(sessionId: string, guard: keyof Guards): Promise<void> {
  await inLiveSession<{ interpreter: { state: { config: { guards: Guards } } } }>(
    sessionId,
    (live) => {
      const { config } = live.interpreter.state;
      config.guards = { ...config.guards, [guard]: false };
    },
  );
}
