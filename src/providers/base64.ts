/**
 * Base64 for audio payloads without Node's Buffer: workerd has no Buffer unless
 * nodejs_compat is on, but both runtimes have btoa/atob.
 *
 * btoa takes a "binary string" (one char per byte). Building it with
 * String.fromCharCode(...bytes) for a whole buffer would blow the argument limit on large
 * audio, so we convert in chunks. The chunk length is a multiple of 3 so each chunk encodes
 * to whole base64 quanta with no padding in the middle, and the pieces can simply be joined.
 */

const ENCODE_CHUNK = 3 * 8192;

export function bytesToBase64(bytes: Uint8Array): string {
  const pieces: string[] = [];
  for (let start = 0; start < bytes.length; start += ENCODE_CHUNK) {
    const chunk = bytes.subarray(start, Math.min(start + ENCODE_CHUNK, bytes.length));
    // apply over a typed array avoids an intermediate number[] copy.
    pieces.push(btoa(String.fromCharCode.apply(null, chunk as unknown as number[])));
  }
  return pieces.join("");
}

/** Throws on malformed input (atob does); callers that must not throw catch it. */
/** Base64url without padding (URL- and header-safe), for tokens and signatures. */
export function bytesToBase64Url(bytes: Uint8Array): string {
  return bytesToBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function base64ToBytes(base64: string): Uint8Array {
  const binary = atob(base64);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    out[i] = binary.charCodeAt(i);
  }
  return out;
}
