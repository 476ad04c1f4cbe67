import { describe, expect, it } from "vitest";
import { playTurn, simulatorSession } from "../workers/session-flow.js";
import { PathRecorder } from "./path-recorder.js";

declare global {
  // The trace plugin's calls go here while a test listens (test/path/trace-plugin.ts).
  var __livelinePath: PathRecorder | undefined;
}

/** The shell's part of the path, in order: socket → input → interpreter → model link → wire. */
const SHELL = [
  "session/session-object.ts",
  "session/client-frames.ts",
  "session/interpreter.ts",
  "session/upstream-link.ts",
  "providers/gemini/adapter.ts",
  "providers/gemini/encode.ts",
];

/**
 * The path as it stands (issue 15): a ratchet, so it can only get shorter. Lower these when
 * the path shortens; a change that lengthens it fails here with the path printed.
 */
const MAX_FILES = 16;
const MAX_RETURNS = 8;

describe("a text frame's path from the socket to the model (traced call by call)", () => {
  it("goes through the shell once, and the whole path stays within its ratchet", {
    timeout: 60_000,
  }, async () => {
    const { client } = await simulatorSession({});
    // The model connection is live: the line goes straight out (no outbox).
    await playTurn(client, "hi");
    const recorder = new PathRecorder(
      "session/session-object.ts:handleClientFrame",
      "session/upstream-link.ts:send",
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
