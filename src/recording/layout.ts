/**
 * Where a session's recordings are kept in the RECORDINGS bucket (R2), and what describes them.
 * Everything of a session is under `sessions/{id}/`:
 *
 * - `audio.json` — the audio recording's manifest (rate, part length, start);
 * - `audio/{index}.pcm` — its parts, written as the session goes: part i holds the samples
 *   [i·n, (i+1)·n) of both tracks, PCM16 little-endian, interleaved (heard, said). A part no
 *   audio fell in is never written; read back it is silence. The last part may be shorter.
 * - `wire.json` — the wire recording's header (the session as created: agent, provider, …);
 * - `wire/{ms}-{n}.jsonl` — its parts, one wire entry a line (wire-format.ts), in order of
 *   their keys (the first entry's ms, then a count within one run of the session's object).
 *
 * `GET /v1/sessions/:id/recording` assembles them into one file (a WAV; `?kind=wire`, JSONL).
 */
import { z } from "zod";

export const RECORDING_VERSION = 1;

const prefix = (sessionId: string) => `sessions/${sessionId}/`;

export const audioManifestKey = (sessionId: string) => `${prefix(sessionId)}audio.json`;
export const audioPartsPrefix = (sessionId: string) => `${prefix(sessionId)}audio/`;
export const audioPartKey = (sessionId: string, index: number) =>
  `${audioPartsPrefix(sessionId)}${String(index).padStart(8, "0")}.pcm`;

export const wireHeaderKey = (sessionId: string) => `${prefix(sessionId)}wire.json`;
export const wirePartsPrefix = (sessionId: string) => `${prefix(sessionId)}wire/`;
export const wirePartKey = (sessionId: string, ms: number, n: number) =>
  `${wirePartsPrefix(sessionId)}${String(Math.max(0, Math.floor(ms))).padStart(12, "0")}-${String(n).padStart(6, "0")}.jsonl`;

/** Every key of a session's recordings begins with this. */
export const sessionRecordingsPrefix = prefix;

/** The index of an audio part from its key, or null for a key that is not one. */
export function audioPartIndex(key: string): number | null {
  const match = /\/audio\/(\d{8})\.pcm$/.exec(key);
  return match === null ? null : Number(match[1]);
}

export const AudioManifest = z.object({
  liveline: z.literal("audio-recording"),
  version: z.literal(RECORDING_VERSION),
  sessionId: z.string(),
  /** The session's start (ISO 8601): sample 0, the timeline's ms 0. */
  startedAt: z.string(),
  sampleRate: z.union([z.literal(8000), z.literal(16000)]),
  channels: z.literal(2),
  /** Left: what the session heard (its clients); right: what it said (the model's audio). */
  tracks: z.tuple([z.literal("heard"), z.literal("said")]),
  partMs: z.number().int().positive(),
  /** After this (ISO 8601) the recording is no longer served, and is deleted (retention). */
  expiresAt: z.string().nullable(),
});
export type AudioManifest = z.infer<typeof AudioManifest>;

export const WireHeader = z.object({
  liveline: z.literal("wire-recording"),
  version: z.literal(RECORDING_VERSION),
  sessionId: z.string(),
  startedAt: z.string(),
  agent: z.string(),
  provider: z.string(),
  model: z.string(),
  /** The encoding of the session's audio both ways (pcm16: 16 kHz in, 24 kHz out). */
  audio: z.enum(["pcm16", "g711_ulaw"]),
  /** The capability record the session ran with (what the core's policy read). */
  capabilities: z.record(z.string(), z.unknown()),
  /** The creator's options (instructions, voice, model, language) and caps. */
  options: z.record(z.string(), z.unknown()),
  limits: z.record(z.string(), z.unknown()),
  /** The session's metadata, with anything that looks like a credential blanked out. */
  metadata: z.record(z.string(), z.unknown()),
  expiresAt: z.string().nullable(),
});
export type WireHeader = z.infer<typeof WireHeader>;
