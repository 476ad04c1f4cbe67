/** A close frame's reason is at most 123 bytes of UTF-8. */
const MAX_CLOSE_REASON_BYTES = 123;

/**
 * The reason cut to fit a close frame, marked with "…". A longer one makes `close` throw,
 * and the socket stayed open (found by the attack: a Telnyx start in a codec liveline does not
 * speak was refused with a 126-byte reason, and the stream hung until its start timer).
 * Every socket liveline or its simulator closes with a reason of its own goes through it.
 */
export function closeReason(reason: string): string {
  const bytes = (text: string) => new TextEncoder().encode(text).length;
  if (bytes(reason) <= MAX_CLOSE_REASON_BYTES) return reason;
  const chars = [...reason];
  while (chars.length > 0 && bytes(`${chars.join("")}…`) > MAX_CLOSE_REASON_BYTES) chars.pop();
  return `${chars.join("")}…`;
}
