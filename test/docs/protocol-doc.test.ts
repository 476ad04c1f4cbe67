/**
 * PROTOCOL.md (the contract) and docs/PROTOCOL-REFERENCE.md (the rest) are kept current with
 * the code: every frame type, error code and status state the code can send is named in the
 * contract, and every timeline row kind in the two (as `code`). Names are read from the
 * sources that define them, so a new one fails here until the documents say what it is.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JsonClientFrame } from "../../src/session/client-frames.js";

const ROOT = process.cwd();
const read = (path: string) => new TextDecoder().decode(readFileSync(join(ROOT, path)));
const doc = read("PROTOCOL.md");
const reference = read("docs/PROTOCOL-REFERENCE.md");

/** Every first capture group of `re` in the files. */
function names(files: string[], re: RegExp): string[] {
  const found = new Set<string>();
  for (const file of files) for (const m of read(file).matchAll(re)) found.add(m[1] ?? "");
  return [...found].sort();
}

/** The names the document does not mention as inline code. */
function missingFrom(text: string, wanted: string[]): string[] {
  return wanted.filter((name) => !text.includes(`\`${name}\``) && !text.includes(`"${name}"`));
}

const serverFrameTypes = () => names(["src/vocabulary/frames.ts"], /\btype: "([a-z_]+)"/g);
const clientFrameTypes = () => JsonClientFrame.options.map((o) => o.shape.type.value);
const frameErrorCodes = () =>
  names(
    [
      "src/core/step-context.ts",
      "src/core/tools.ts",
      "src/core/session-core.ts",
      "src/core/turns.ts",
      "src/core/watchdog.ts",
      "src/core/upstream.ts",
      "src/core/carry.ts",
      "src/session/client-gate.ts",
      "src/session/app-sockets.ts",
    ],
    /(?:recordError\(\s*|sendError\(\s*[\w.]+,\s*|\bcode: )"([a-z_]+)"/g,
  ).concat(
    // A message that cannot be taken is a client_bad_frame input with its code (zod's own
    // `code: "custom"` issues in the same file are not frames).
    names(["src/session/client-frames.ts"], /type: "client_bad_frame",[^}]*?\bcode: "([a-z_]+)"/g),
  );
const httpErrorCodes = () =>
  names(
    [
      "src/http/app.ts",
      "src/http/errors.ts",
      "src/http/auth.ts",
      "src/http/body-limit.ts",
      "src/http/context.ts",
      "src/http/create-session.ts",
      "src/http/json-body.ts",
      "src/http/method-not-allowed.ts",
      "src/http/routes/sessions.ts",
      "src/http/routes/recording.ts",
      "src/http/routes/telephony.ts",
      "src/http/routes/openai-sip.ts",
      "src/http/routes/usage.ts",
      "src/http/routes/webrtc.ts",
      "src/http/routes/ws.ts",
      "src/session/session-object.ts",
    ],
    /(?:HttpError\(\s*\d+,\s*|errorResponse\(c,\s*\d+,\s*|jsonError\(\s*\d+,\s*)"([a-z_]+)"/g,
  );
const statusStates = () => {
  const line = /type UpstreamStatus = ([^;]+);/.exec(read("src/vocabulary/log-events.ts"))?.[1];
  return [...(line ?? "").matchAll(/"([a-z_]+)"/g)].map((m) => m[1] ?? "");
};
const timelineKinds = () => {
  const union = /type TraceKind =([^;]+);/.exec(read("src/core/effects.ts"))?.[1];
  return [...(union ?? "").matchAll(/"([A-Z_]+)"/g)].map((m) => m[1] ?? "");
};

describe("PROTOCOL.md and its reference", () => {
  it("finds the names in the code (else this test checks nothing)", () => {
    expect(serverFrameTypes()).toEqual(
      expect.arrayContaining(["ready", "pong", "tool_cancelled", "status", "error"]),
    );
    expect(clientFrameTypes()).toEqual(expect.arrayContaining(["text", "tool_result", "played"]));
    expect(frameErrorCodes()).toEqual(
      expect.arrayContaining(["bad_frame", "rate_limited", "speech_lost", "too_many_clients"]),
    );
    expect(frameErrorCodes()).not.toContain("custom");
    expect(httpErrorCodes()).toEqual(
      expect.arrayContaining([
        "unknown_session",
        "payload_too_large",
        "not_configured",
        "internal",
      ]),
    );
    expect(statusStates()).toEqual(["connecting", "live", "reconnecting", "idle", "ended"]);
    expect(timelineKinds().length).toBeGreaterThan(30);
  });

  it("names every server frame type and every client frame type", () => {
    expect(missingFrom(doc, serverFrameTypes())).toEqual([]);
    expect(missingFrom(doc, clientFrameTypes())).toEqual([]);
    // Built outside the frame types: the replay batch and the keepalive answer.
    expect(missingFrom(doc, ["replay", "keepalive"])).toEqual([]);
  });

  it("names every error code, of frames and of HTTP answers", () => {
    expect(missingFrom(doc, frameErrorCodes())).toEqual([]);
    expect(missingFrom(doc, httpErrorCodes())).toEqual([]);
  });

  it("names every status state and every timeline row kind", () => {
    expect(missingFrom(doc, statusStates())).toEqual([]);
    expect(missingFrom(`${doc}\n${reference}`, timelineKinds())).toEqual([]);
  });

  it("control: a name the document lacks is reported", () => {
    const without = doc.replaceAll("speech_lost", "speech lost");
    expect(missingFrom(without, frameErrorCodes())).toEqual(["speech_lost"]);
    expect(missingFrom(doc, ["no_such_code"])).toEqual(["no_such_code"]);
  });
});
