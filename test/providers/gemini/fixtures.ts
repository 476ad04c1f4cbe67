/**
 * Reads the Gemini fixtures kept in the repository under test/fixtures/gemini (provenance in
 * test/fixtures/README.md): the recorded `*.websocket.log` sessions and the SDK message lists.
 *
 * `.websocket.log` format: frames `<dir><N> <payload>` back to back, `>` client→server,
 * `<` server→client, N the payload length in *bytes*. The payload carries its own trailing
 * newline(s), so the next frame starts right after it; we still skip stray whitespace.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const FIXTURES = resolve(process.cwd(), "test/fixtures");
export const GEMINI = join(FIXTURES, "gemini");

export interface LogFrame {
  dir: "client" | "server";
  /** The payload exactly as recorded (UTF-8 bytes). */
  bytes: Uint8Array;
  text: string;
}

const utf8 = new TextDecoder();

export function parseWebsocketLog(data: Uint8Array): LogFrame[] {
  const frames: LogFrame[] = [];
  let i = 0;
  const isSpace = (b: number | undefined) => b === 0x0a || b === 0x0d || b === 0x20;
  while (i < data.length) {
    while (i < data.length && isSpace(data[i])) i++;
    if (i >= data.length) break;
    const marker = data[i];
    if (marker !== 0x3e && marker !== 0x3c) {
      throw new Error(`bad direction marker at byte ${i}: ${marker}`);
    }
    i++;
    let n = 0;
    let digits = 0;
    while (data[i] !== undefined && data[i]! >= 0x30 && data[i]! <= 0x39) {
      n = n * 10 + (data[i]! - 0x30);
      i++;
      digits++;
    }
    if (digits === 0 || data[i] !== 0x20) throw new Error(`bad length at byte ${i}`);
    i++;
    if (i + n > data.length) throw new Error(`frame at byte ${i} overruns the file`);
    const bytes = data.subarray(i, i + n);
    frames.push({ dir: marker === 0x3e ? "client" : "server", bytes, text: utf8.decode(bytes) });
    i += n;
  }
  return frames;
}

export interface RecordedSession {
  /** e.g. "recorded/live_ML_Dev_should_send_tool_response" */
  name: string;
  frames: LogFrame[];
}

export function loadSession(dir: "recorded" | "recorded-vertex", stem: string): RecordedSession {
  const data = readFileSync(join(GEMINI, dir, `${stem}.websocket.log`));
  return { name: `${dir}/${stem}`, frames: parseWebsocketLog(data) };
}

export function listSessions(dir: "recorded" | "recorded-vertex"): RecordedSession[] {
  return readdirSync(join(GEMINI, dir))
    .filter((f) => f.endsWith(".websocket.log"))
    .sort()
    .map((f) => loadSession(dir, f.slice(0, -".websocket.log".length)));
}

export interface SdkMessage {
  source: string;
  test: string;
  msg: unknown;
  raw?: string | null;
}

export function loadSdkMessages(kind: "server" | "client"): SdkMessage[] {
  const text = utf8.decode(
    readFileSync(join(GEMINI, "sdk-messages", `sdk_unit_test_${kind}_messages.jsonl`)),
  );
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as SdkMessage);
}
