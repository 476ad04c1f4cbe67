import { describe, expect, it } from "vitest";
import { playTurn, simulatorSession } from "../support/session-flow.js";
import { PathRecorder } from "./path-recorder.js";

declare global {
  // The trace plugin's calls go here while a test listens (test/path/trace-plugin.ts).
  var __livelinePath: PathRecorder | undefined;
}

/**
 * The shell's part of the path, in order: the client gate (the socket's message) → input →
 * interpreter → model link → wire.
 */
const SHELL = [
  "session/client-gate.ts",
  "session/client-frames.ts",
  "session/interpreter.ts",
  "session/model-connection.ts",
  "providers/gemini/adapter.ts",
  "providers/gemini/encode.ts",
];

/**
 * The path as it stands (issue 15): a ratchet, so it can only get shorter. Lower these when
 * the path shortens; a change that lengthens it fails here with the path printed. (Re-recorded
 * when idle and handoff left upstream.ts for modules of their own, code moved as-is: every
 * line notes activity in idle.ts and looks for a pending handoff in handoff.ts, so 16 files
 * became 18, and 8 returns 7. Again when the held-line policy left session-core.ts for
 * held-lines.ts, moved as-is: a typed line is held or taken there, entered once: 19 files,
 * returns unchanged.)
 */
const MAX_FILES = 19;
const MAX_RETURNS = 7;

describe("a text frame's path from the socket to the model (traced call by call)", () => {
  it("goes through the shell once, and the whole path stays within its ratchet", {
    timeout: 60_000,
  }, async () => {
    const { client } = await simulatorSession({});
    // The model connection is live: the line goes straight out (no outbox).
    await playTurn(client, "hi");
    const recorder = new PathRecorder(
      "session/client-gate.ts:handleClientFrame",
      "session/model-connection.ts:send",
    );
    globalThis.__livelinePath = recorder;
    try {
      await playTurn(client, "what time is it");
    } finally {
      globalThis.__livelinePath = undefined;
    }
    const files = recorder.files();
    const returns = recorder.returns();
    const report = `${files.length} files, ${returns.length} returns:\n${recorder.outline()}`;
    console.log(report);
    // It reached the model's wire.
    expect(recorder.visits.at(-1), report).toMatchObject({
      file: "providers/gemini/encode.ts",
      fn: "encodeCommand",
    });
    // The shell: each file once, in this order, and nothing else outside the core.
    const outsideCore = recorder.visits
      .filter((v) => !v.file.startsWith("core/") && !v.file.startsWith("vocabulary/"))
      .map((v) => v.file);
    expect(outsideCore, report).toEqual(SHELL);
    expect(files.length, report).toBeLessThanOrEqual(MAX_FILES);
    expect(returns.length, report).toBeLessThanOrEqual(MAX_RETURNS);
  });
});

/**
 * The reply leg: the model message with the reply's first text, from the model connection's
 * message listener to the client socket's send of the `text` frame. The shell's part, in
 * order: model connection → provider decode → the interpreter (the connection hands it its
 * events as inputs);
 * after the core's step, the interpreter's log port (session-log.ts) → store, then its
 * clients port (client-sockets.ts, the one place that holds the sockets) → the client's link
 * (sockets.ts). Linear: the ports are objects, so each file is entered once. (Until issue 54
 * the connection's callback and the log and clients ports were closures in live-session.ts,
 * entered three times, and the socket list was the object's: 26 calls.)
 */
const SHELL_REPLY = [
  "session/model-connection.ts",
  "providers/gemini/adapter.ts",
  "providers/gemini/decode.ts",
  "session/interpreter.ts",
  "session/session-log.ts",
  "session/history-store.ts",
  "session/client-sockets.ts",
  "session/sockets.ts",
];
/** The shell's returns to a file on the reply leg: none (a ratchet at its floor; 2 before). */
const MAX_SHELL_REPLY_RETURNS = 0;

/**
 * The reply leg as it stands: a ratchet of its own, so it can only get shorter. Every file
 * on the leg (the core's step included), in first-visit order, and the traced calls (visits:
 * a call into another file) it takes.
 */
const REPLY_FILES = [
  "session/model-connection.ts",
  "providers/gemini/adapter.ts",
  "providers/gemini/decode.ts",
  "session/interpreter.ts",
  "core/session-core.ts",
  "core/step-context.ts",
  "core/upstream.ts",
  "core/generations.ts",
  "core/regeneration.ts",
  "core/follow-up.ts",
  "core/turn-state.ts",
  "vocabulary/frames.ts",
  "core/handoff.ts",
  "core/arrival.ts",
  "core/watchdog.ts",
  "core/call-archive.ts",
  "session/session-log.ts",
  "session/history-store.ts",
  "session/client-sockets.ts",
  "session/sockets.ts",
];
const MAX_REPLY_CALLS = 24;

describe("a model reply's path from the model connection to the client's socket (traced)", () => {
  it("goes through the shell in one order, and the whole leg stays within its ratchet", {
    timeout: 60_000,
  }, async () => {
    const { client } = await simulatorSession({});
    await playTurn(client, "hi");
    // From the model message that reaches a client socket first: a message no client hears
    // of (a resumption update) returns before the end, and the recorder drops it.
    const recorder = new PathRecorder(
      "session/model-connection.ts:openSocket (on message)",
      "session/sockets.ts:frame",
    );
    globalThis.__livelinePath = recorder;
    let frames: Awaited<ReturnType<typeof playTurn>>;
    try {
      frames = await playTurn(client, "what time is it");
    } finally {
      globalThis.__livelinePath = undefined;
    }
    const calls = recorder.visits.length;
    const files = recorder.files();
    const report = `${calls} calls, ${files.length} files:\n${recorder.outline()}`;
    console.log(report);
    // The socket's first send after the user's line (sent by the inbound step) is the text.
    expect(
      frames.map((f) => f.type).slice(0, 2),
      "the reply's first frame is not text: the leg traced is not a text reply's",
    ).toEqual(["user", "text"]);
    expect(recorder.complete, report).toBe(true);
    expect(recorder.visits.at(-1), report).toMatchObject({
      file: "session/sockets.ts",
      fn: "frame",
    });

    // (a) The shell: these files in this order, each once.
    const shell = recorder.visits
      .filter((v) => !v.file.startsWith("core/") && !v.file.startsWith("vocabulary/"))
      .map((v) => v.file);
    const shellReturns = shell.filter((f, i) => shell.indexOf(f) !== i);
    expect(
      shellReturns.length,
      `a shell file entered again on the reply leg (each is entered once; the recorded ${MAX_SHELL_REPLY_RETURNS} returns only go down): ${shellReturns.join(", ")}\n${report}`,
    ).toBeLessThanOrEqual(MAX_SHELL_REPLY_RETURNS);
    expect(
      shell,
      `the reply leg's shell changed: if it got shorter (or a file moved), update SHELL_REPLY to the path below; it may lose entries, never gain them:\n${report}`,
    ).toEqual(SHELL_REPLY);

    // (b) The whole leg's ratchet: no file off the recorded list, no more calls than recorded.
    const added = files.filter((f) => !REPLY_FILES.includes(f));
    const gone = REPLY_FILES.filter((f) => !files.includes(f));
    expect(
      added,
      `new on the reply leg: ${added.join(", ")}. The ratchet only goes down: keep the file off the path (if it is one on the list renamed or moved, rename it in REPLY_FILES):\n${report}`,
    ).toEqual([]);
    expect(
      gone,
      `no longer on the reply leg: ${gone.join(", ")}. The path shrank (or a file moved): take it out of REPLY_FILES, and set MAX_REPLY_CALLS to ${calls}:\n${report}`,
    ).toEqual([]);
    expect(
      calls,
      `the reply leg now takes ${calls} traced calls, over the recorded MAX_REPLY_CALLS = ${MAX_REPLY_CALLS}. The ratchet only goes down: shorten the path rather than raise the figure:\n${report}`,
    ).toBeLessThanOrEqual(MAX_REPLY_CALLS);
    if (calls < MAX_REPLY_CALLS)
      console.log(`the reply leg got shorter: lower MAX_REPLY_CALLS to ${calls}`);
  });
});
