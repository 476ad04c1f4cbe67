/**
 * Limits on client values that are stored (tool results, session metadata): a value nested
 * thousands of levels deep is accepted by JSON.parse but breaks whatever later walks it
 * recursively (issue 9: one such tool result made /history answer 500 for good). Checked
 * without recursion, so the check itself cannot overflow the stack.
 */
interface JsonLimits {
  maxDepth: number;
  /** Object keys and array items, counted over the whole value. */
  maxEntries: number;
}

const STORED_VALUE_LIMITS: JsonLimits = { maxDepth: 64, maxEntries: 10_000 };

/** Null when `value` is within the limits; else what is over, for the error message. */
export function jsonLimitProblem(value: unknown, limits = STORED_VALUE_LIMITS): string | null {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  let entries = 0;
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > limits.maxDepth) return `nested deeper than ${limits.maxDepth} levels`;
    const children = Array.isArray(v) ? v : Object.values(v);
    entries += children.length;
    if (entries > limits.maxEntries) return `more than ${limits.maxEntries} keys and items`;
    for (const child of children) stack.push({ value: child, depth: depth + 1 });
  }
  return null;
}

/**
 * The length of `text` in UTF-8 bytes, as SQLite and the wire count it, without encoding it
 * (a lone surrogate counts as the 3 bytes of the U+FFFD it becomes).
 */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (
      unit >= 0xd800 &&
      unit <= 0xdbff &&
      i + 1 < text.length &&
      (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00
    ) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
