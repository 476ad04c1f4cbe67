/**
 * Spoken input for the carrier stand-in: the μ-law samples of a RIFF WAV file whose format is
 * μ-law (format tag 7), 8000 Hz, mono, 8 bits — what Twilio carries. Tests make one with
 *   espeak-ng -w x.wav "…" && sox x.wav -r 8000 -c 1 -e u-law y.wav
 * Anything else is refused with what it is, rather than converted: a test that speaks the
 * wrong audio should fail loudly, not sound like noise.
 */

const WAVE_FORMAT_MULAW = 7;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

export class WavFormatError extends Error {
  override name = "WavFormatError";
}

function fourCC(view: DataView, offset: number): string {
  return String.fromCharCode(
    view.getUint8(offset),
    view.getUint8(offset + 1),
    view.getUint8(offset + 2),
    view.getUint8(offset + 3),
  );
}

export function mulawFromWav(bytes: Uint8Array): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12 || fourCC(view, 0) !== "RIFF" || fourCC(view, 8) !== "WAVE")
    throw new WavFormatError("not a RIFF WAVE file");
  let format: { tag: number; channels: number; rate: number; bits: number } | null = null;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = fourCC(view, offset);
    const declared = view.getUint32(offset + 4, true);
    const body = offset + 8;
    // A streamed file may declare 0xFFFFFFFF; take what is there.
    const size = Math.min(declared, bytes.length - body);
    if (id === "fmt ") {
      if (size < 16) throw new WavFormatError("fmt chunk too short");
      let tag = view.getUint16(body, true);
      // WAVE_FORMAT_EXTENSIBLE keeps the real tag in the first two bytes of its sub-format GUID.
      if (tag === WAVE_FORMAT_EXTENSIBLE && size >= 26) tag = view.getUint16(body + 24, true);
      format = {
        tag,
        channels: view.getUint16(body + 2, true),
        rate: view.getUint32(body + 4, true),
        bits: view.getUint16(body + 14, true),
      };
    } else if (id === "data") {
      if (format === null) throw new WavFormatError("data chunk before the fmt chunk");
      const { tag, channels, rate, bits } = format;
      if (tag !== WAVE_FORMAT_MULAW || channels !== 1 || rate !== 8000 || bits !== 8)
        throw new WavFormatError(
          `need μ-law (format 7) 8000 Hz mono 8-bit; this is format ${tag}, ${rate} Hz, ` +
            `${channels} channel(s), ${bits}-bit (convert with: sox in.wav -r 8000 -c 1 -e u-law out.wav)`,
        );
      return bytes.slice(body, body + size);
    }
    // Chunks are padded to an even length.
    offset = body + size + (size % 2);
  }
  throw new WavFormatError(format === null ? "no fmt chunk" : "no data chunk");
}
