/**
 * A session's wire recording, in its object: every client message and connection, every frame
 * to and from the model on each of its connections, and each durable frame sent, with its time
 * (recording/wire-format.ts). A frame is noted as it passes (a reference and the time); a
 * timer writes what was noted as one part every RECORDING_PART_MS (recording-parts.ts), with
 * the Worker's secrets blanked out. The session's end writes the rest.
 */
import { bytesToBase64 } from "../providers/base64.js";
import { type WireHeader, wireHeaderKey, wirePartKey } from "../recording/layout.js";
import { redactSecrets, type WireEntry } from "../recording/wire-format.js";
import type { RecordingParts } from "./recording-parts.js";

/** A frame as it crossed the model connection's socket. */
type Frame = string | ArrayBuffer | ArrayBufferView;

/** What the model connection reports to a wire recording (session/model-connection.ts). */
export interface WireTap {
  opened(conn: number): void;
  sent(conn: number, frame: Frame): void;
  received(conn: number, frame: Frame): void;
  closed(conn: number, code: number, reason: string, by: "model" | "gateway"): void;
}

/** An entry as noted on the path: the frame still as it came (made JSON when written). */
type Noted =
  | { entry: WireEntry; frame?: undefined; json?: undefined }
  | {
      entry: Extract<WireEntry, { dir: "to_model" | "from_model" }>;
      frame: Frame;
      json?: undefined;
    }
  /** A durable frame as encoded for the clients (parsed when written). */
  | { entry: { ms: number; dir: "durable" }; frame?: undefined; json: string };

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

export class WireRecorder implements WireTap {
  private noted: Noted[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly startedAt: number;
  private written = 0;
  private finished = false;

  constructor(
    private readonly header: WireHeader,
    private readonly parts: RecordingParts,
    /** The Worker's secrets: blanked out of every frame written. */
    private readonly secrets: readonly string[],
    private readonly partMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.startedAt = Date.parse(header.startedAt);
    parts.describe(
      wireHeaderKey(header.sessionId),
      JSON.parse(redactSecrets(JSON.stringify(header), secrets)) as unknown,
    );
  }

  client(clientId: string, data: string | ArrayBuffer): void {
    this.note(
      typeof data === "string"
        ? { ms: this.ms(), dir: "client", client: clientId, text: data }
        : { ms: this.ms(), dir: "client", client: clientId, audioBytes: data.byteLength },
    );
  }

  connected(clientId: string, resumeFrom: number | null): void {
    this.note({ ms: this.ms(), dir: "client_connected", client: clientId, resumeFrom });
  }

  left(clientId: string): void {
    this.note({ ms: this.ms(), dir: "client_left", client: clientId });
  }

  /** A durable frame, as encoded for the clients. */
  durable(json: string): void {
    if (this.parts.stopped || this.finished) return;
    this.noted.push({ entry: { ms: this.ms(), dir: "durable" }, json });
    if (this.timer === null) this.schedule();
  }

  opened(conn: number): void {
    this.note({ ms: this.ms(), dir: "model_open", conn });
  }

  sent(conn: number, frame: Frame): void {
    this.noteFrame("to_model", conn, frame);
  }

  received(conn: number, frame: Frame): void {
    this.noteFrame("from_model", conn, frame);
  }

  closed(conn: number, code: number, reason: string, by: "model" | "gateway"): void {
    this.note({ ms: this.ms(), dir: "model_closed", conn, code, reason, by });
  }

  /** The session ends: what is noted is written. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.flush();
  }

  /** Writes what was noted as one part. */
  flush(): void {
    this.timer = null;
    const noted = this.noted;
    this.noted = [];
    if (noted.length === 0 || this.parts.stopped) return;
    const lines = noted.map(({ entry, frame, json }) =>
      JSON.stringify(
        json !== undefined
          ? { ...entry, frame: JSON.parse(json) as unknown }
          : frame === undefined
            ? entry
            : { ...entry, ...frameFields(frame) },
      ),
    );
    const body = redactSecrets(`${lines.join("\n")}\n`, this.secrets);
    const first = noted[0]!.entry.ms;
    this.parts.write(wirePartKey(this.header.sessionId, first, this.written++), body);
  }

  private noteFrame(dir: "to_model" | "from_model", conn: number, frame: Frame): void {
    if (this.parts.stopped || this.finished) return;
    this.noted.push({ entry: { ms: this.ms(), dir, conn }, frame });
    if (this.timer === null) this.schedule();
  }

  private note(entry: WireEntry): void {
    if (this.parts.stopped || this.finished) return;
    this.noted.push({ entry });
    if (this.timer === null) this.schedule();
  }

  private schedule(): void {
    if (this.finished) return;
    this.timer = setTimeout(() => this.flush(), this.partMs);
  }

  private ms(): number {
    return this.clock() - this.startedAt;
  }
}

/** A frame as a wire entry keeps it: its text, or binary as text (UTF-8) or base64. */
function frameFields(frame: Frame): { text?: string; base64?: string; binary?: boolean } {
  if (typeof frame === "string") return { text: frame };
  const bytes =
    frame instanceof ArrayBuffer
      ? new Uint8Array(frame)
      : new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength);
  try {
    return { text: utf8.decode(bytes), binary: true };
  } catch {
    return { base64: bytesToBase64(bytes) };
  }
}
