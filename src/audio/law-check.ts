/**
 * Is a G.711 line's audio in the law its stream declared? A stream declared A-law that
 * carries μ-law (or the reverse) still decodes — into a scrambled signal: the two laws code
 * sign alike but order their segments differently, so a smooth waveform read by the wrong
 * law jumps between unrelated magnitudes (and the other law's silence becomes a steady ±848).
 * Agents that assumed μ-law on an A-law trunk gave clipped audio and broken transcripts
 * (VapiAI docs PR #1219); this is how liveline notices the opposite mistake of a carrier's.
 *
 * Each 20 ms frame is decoded by both laws; where both are loud enough to judge, the frame's
 * roughness (the RMS of its sample-to-sample differences over its RMS: a voice, band-limited
 * to 3.4 kHz, is smooth; a scrambled one is not) is compared. A frame is evidence when one
 * law reads it clearly smoother than the other. After `EVIDENCE_FRAMES` such frames, the
 * verdict: `mismatch` when at least `MISMATCH_SHARE` of them read smoother in the other law,
 * else `consistent`. Then it stops looking (its cost is the first second or so of speech; a
 * line silent for a minute is not looked at any more).
 *
 * It only reports: the audio goes on as declared. A heuristic that changed the audio could
 * garble an honest call; a report costs a timeline row.
 */
import { alawToPcm16, mulawToPcm16 } from "./g711.js";

export type G711Law = "mulaw" | "alaw";

/** Samples of a 20 ms frame at 8 kHz. */
const FRAME = 160;
/** Below this RMS (of PCM16) in either reading, a frame is too quiet to judge. */
const LOUD_RMS = 200;
/** One reading is this much rougher than the other: the frame is evidence. */
const CLEARLY_ROUGHER = 1.5;
/** Frames of evidence before the verdict (200 ms of speech). */
export const EVIDENCE_FRAMES = 10;
/** Of the evidence, at least this share reads smoother in the other law: a mismatch. */
const MISMATCH_SHARE = 0.8;
/** Frames looked at, at most, for the evidence (a minute of a caller who says nothing). */
const MAX_FRAMES = 3000;

export type LawVerdict = "consistent" | "mismatch";

export class LawCheck {
  readonly declared: G711Law;
  private readonly frame = new Uint8Array(FRAME);
  private filled = 0;
  private frames = 0;
  private forDeclared = 0;
  private forOther = 0;
  private verdictGiven: LawVerdict | null = null;

  // No parameter properties: scripts run this file with Node's type stripping.
  constructor(declared: G711Law) {
    this.declared = declared;
  }

  /** The verdict, once there is one (null until enough speech was heard). */
  get verdict(): LawVerdict | null {
    return this.verdictGiven;
  }

  /**
   * The line's bytes, as they came; the verdict when this push settled it, else null. A line
   * that gives no evidence for `MAX_FRAMES` (a silent caller) is not looked at any more.
   */
  push(bytes: Uint8Array): LawVerdict | null {
    if (this.verdictGiven !== null || this.frames >= MAX_FRAMES) return null;
    let at = 0;
    while (at < bytes.length) {
      const take = Math.min(FRAME - this.filled, bytes.length - at);
      this.frame.set(bytes.subarray(at, at + take), this.filled);
      this.filled += take;
      at += take;
      if (this.filled < FRAME) break;
      this.filled = 0;
      this.frames++;
      this.judge(this.frame);
      if (this.forDeclared + this.forOther >= EVIDENCE_FRAMES) {
        this.verdictGiven =
          this.forOther >= MISMATCH_SHARE * EVIDENCE_FRAMES ? "mismatch" : "consistent";
        return this.verdictGiven;
      }
    }
    return null;
  }

  private judge(frame: Uint8Array): void {
    // The declared reading first: a quiet frame (most of a line: silence) ends it there.
    const declared = roughness(
      this.declared === "mulaw" ? mulawToPcm16(frame) : alawToPcm16(frame),
    );
    if (declared === null) return;
    const other = roughness(this.declared === "mulaw" ? alawToPcm16(frame) : mulawToPcm16(frame));
    if (other === null) return;
    if (declared > CLEARLY_ROUGHER * other) this.forOther++;
    else if (other > CLEARLY_ROUGHER * declared) this.forDeclared++;
  }
}

/** RMS of the differences over RMS of the samples; null for a frame too quiet to judge. */
function roughness(pcm: Int16Array): number | null {
  let sum = 0;
  let diffs = 0;
  for (let i = 0; i < pcm.length; i++) {
    const x = pcm[i]!;
    sum += x * x;
    if (i > 0) {
      const d = x - pcm[i - 1]!;
      diffs += d * d;
    }
  }
  const rms = Math.sqrt(sum / pcm.length);
  if (rms < LOUD_RMS) return null;
  return Math.sqrt(diffs / (pcm.length - 1)) / rms;
}
