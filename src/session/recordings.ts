/**
 * What a session records, and the recorders that do it (docs/RECORDINGS.md): its audio
 * (audio-recorder.ts) and its model wire (wire-recorder.ts), each opted into by the session's
 * agent (`recording`) or its creator (POST /v1/sessions `recording`, which wins), written to
 * the Worker's RECORDINGS bucket. Without the bucket nothing is recorded.
 */
import type { RecordingOptions } from "../agents/define.js";
import type { SessionRecording } from "../contracts/session-api.js";
import type { Env } from "../contracts/worker-env.js";
import type { TraceKind } from "../core/effects.js";
import {
  type AudioManifest,
  audioPartsPrefix,
  RECORDING_VERSION,
  type WireHeader,
  wirePartsPrefix,
} from "../recording/layout.js";
import { redactCredentials } from "../recording/wire-format.js";
import type { ModelCapabilities } from "../vocabulary/model.js";
import type { AudioEncoding } from "../vocabulary/provider-adapter.js";
import type { Config } from "../worker-config.js";
import { AudioRecorder } from "./audio-recorder.js";
import type { SessionMeta } from "./meta.js";
import { RecordingParts } from "./recording-parts.js";
import { WireRecorder } from "./wire-recorder.js";

/** What a session records: its agent's choice, with its creator's over it. */
export interface RecordingChoice {
  audio: boolean;
  wire: boolean;
  maxBytes: number;
  /** What a phone call's caller is told first (null: nothing). */
  announce: string | null;
}

export function recordingChoice(
  agent: RecordingOptions | undefined,
  session: SessionRecording,
  defaultMaxBytes: number,
): RecordingChoice {
  const audio = session.audio ?? agent?.audio ?? false;
  const wire = session.wire ?? agent?.wire ?? false;
  return {
    audio,
    wire,
    // Said only of a call that is recorded.
    announce: audio || wire ? (agent?.announce ?? null) : null,
    maxBytes: Math.min(
      session.maxBytes ?? Number.POSITIVE_INFINITY,
      agent?.maxBytes ?? defaultMaxBytes,
    ),
  };
}

/** The line a phone call's model is told first when its agent announces recordings. */
export function recordedCallLine(announce: string): string {
  return `(The caller is on the line. Before anything else, tell them word for word: "${announce}" Then greet them.)`;
}

/**
 * Names of the Worker's vars whose values are secrets (blanked out of a wire recording): a word
 * of the name is one of these (GEMINI_API_KEY, TWILIO_AUTH_TOKEN, OTEL_EXPORTER_OTLP_HEADERS,
 * an MCP server's …_TOKEN; not …_TOKENS, a count).
 */
const SECRET_VAR = /(^|_)(KEY|TOKEN|SECRET|PASSWORD|HEADERS|CREDENTIALS?)(_|$)/i;

/** The Worker's secret values (every var named like one; a number is none), longest first. */
export function secretsOf(env: object): string[] {
  return Object.entries(env)
    .filter(
      ([name, value]) =>
        SECRET_VAR.test(name) && typeof value === "string" && !/^\d*$/.test(value.trim()),
    )
    .map(([, value]) => value as string)
    .sort((a, b) => b.length - a.length);
}

export interface RecordingContext {
  env: Env;
  config: Config;
  meta: SessionMeta;
  choice: RecordingChoice;
  /** The session's audio both ways; a phone call records at its 8 kHz. */
  audio: AudioEncoding;
  phoneCall: boolean;
  model: string;
  capabilities: ModelCapabilities;
  trace(kind: TraceKind, detail: Record<string, unknown>): void;
  warn(message: string): void;
  /** Each request to the bucket, counted as the session's subrequest. */
  track<T>(request: Promise<T>): Promise<T>;
}

export class SessionRecordings {
  readonly audio: AudioRecorder | null;
  readonly wire: WireRecorder | null;
  /** What a phone call's caller is told first, that the call is recorded (null: nothing). */
  readonly announcement: string | null;
  private readonly parts: RecordingParts[] = [];

  constructor(context: RecordingContext) {
    const { env, config, meta, choice } = context;
    const bucket = env.RECORDINGS;
    const sessionId = meta.sessionId;
    this.announcement = bucket === undefined ? null : choice.announce;
    const days = config.RECORDING_RETENTION_DAYS;
    const expiresAt =
      days === undefined
        ? null
        : new Date(Date.parse(meta.createdAt) + days * 86_400_000).toISOString();
    const partsOf = (kind: "audio" | "wire", prefix: string) => {
      const parts = new RecordingParts({
        bucket: bucket!,
        kind,
        prefix,
        maxBytes: choice.maxBytes,
        trace: context.trace,
        warn: context.warn,
        track: context.track,
      });
      this.parts.push(parts);
      void parts
        .countEarlier()
        .catch((err: unknown) =>
          context.warn(`recording (${kind}): its parts could not be listed: ${String(err)}`),
        );
      return parts;
    };
    if (bucket !== undefined && choice.audio) {
      const manifest: AudioManifest = {
        liveline: "audio-recording",
        version: RECORDING_VERSION,
        sessionId,
        startedAt: meta.createdAt,
        sampleRate: context.phoneCall || context.audio === "g711_ulaw" ? 8000 : 16000,
        channels: 2,
        tracks: ["heard", "said"],
        partMs: config.RECORDING_PART_MS,
        expiresAt,
      };
      this.audio = new AudioRecorder(
        manifest,
        partsOf("audio", audioPartsPrefix(sessionId)),
        context.audio,
      );
      context.trace("RECORDING_STARTED", {
        recording: "audio",
        sampleRate: manifest.sampleRate,
        partMs: manifest.partMs,
      });
    } else this.audio = null;
    if (bucket !== undefined && choice.wire) {
      const secrets = secretsOf(env);
      const header: WireHeader = {
        liveline: "wire-recording",
        version: RECORDING_VERSION,
        sessionId,
        startedAt: meta.createdAt,
        agent: meta.agent,
        provider: meta.provider,
        model: context.model,
        audio: context.audio,
        capabilities: { ...context.capabilities },
        options: { ...meta.options },
        limits: { ...meta.limits },
        metadata: redactCredentials(meta.metadata) as Record<string, unknown>,
        expiresAt,
      };
      this.wire = new WireRecorder(
        header,
        partsOf("wire", wirePartsPrefix(sessionId)),
        secrets,
        config.RECORDING_PART_MS,
      );
      context.trace("RECORDING_STARTED", { recording: "wire", partMs: config.RECORDING_PART_MS });
    } else this.wire = null;
    if (bucket === undefined && (choice.audio || choice.wire))
      context.trace("RECORDING_STOPPED", {
        recording: choice.audio ? "audio" : "wire",
        reason: "no RECORDINGS bucket",
      });
  }

  /** The session ended (or its object goes away): everything noted is written. */
  finish(): void {
    this.audio?.finish();
    this.wire?.finish();
  }

  /** Every write so far has landed (tests; the end of a session). */
  async settled(): Promise<void> {
    await Promise.all(this.parts.map((p) => p.settled()));
  }
}
