/**
 * A constant-time string comparison for secrets (API keys, grants, webhook signatures), at a
 * low layer so that http and telephony can both use it. Both sides are hashed first, so
 * neither their lengths nor a common prefix shows in the time taken.
 *
 * workerd has crypto.subtle.timingSafeEqual; Node and browsers (where the carrier stand-in
 * and its unit tests run) do not, so there the digests are compared by an XOR over every
 * byte: it never stops early, and what it compares are hashes, not the secret.
 */
type SubtleWithTimingSafeEqual = SubtleCrypto & {
  timingSafeEqual?: (a: ArrayBuffer, b: ArrayBuffer) => boolean;
};

export async function safeEqual(a: string, b: string): Promise<boolean> {
  const enc = new TextEncoder();
  const subtle: SubtleWithTimingSafeEqual = crypto.subtle;
  const [ha, hb] = await Promise.all([
    subtle.digest("SHA-256", enc.encode(a)),
    subtle.digest("SHA-256", enc.encode(b)),
  ]);
  if (typeof subtle.timingSafeEqual === "function") return subtle.timingSafeEqual(ha, hb);
  const x = new Uint8Array(ha);
  const y = new Uint8Array(hb);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}
