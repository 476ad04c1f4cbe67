/**
 * The keys a caller types, gathered into entries: `#` ends an entry at once (and is not part
 * of it), and so does a pause of ENTRY_PAUSE_MS after the last key — so "1 2 3 4 #" is one
 * entry, not five lines, and a single key of a menu ("press 1 for sales") is one entry after
 * the pause. Pure: the caller of `press` arms the pause timer it asks for.
 */

/** A pause this long after a key ends the entry (people type a number at 3–4 keys a second). */
export const ENTRY_PAUSE_MS = 1500;

/** What the agent does with an entry: the model hears its keys, or only tools may read them. */
export type KeypadMode = "said" | "tools";

export class Keypad {
  private keys = "";

  /** A key pressed: the finished entry when it was `#`, else null (the entry goes on). */
  press(digit: string): string | null {
    if (digit === "#") return this.finish();
    this.keys += digit;
    return null;
  }

  /** The pause after the last key has passed: the entry typed so far (null: none). */
  pause(): string | null {
    return this.keys === "" ? null : this.finish();
  }

  private finish(): string {
    const entry = this.keys;
    this.keys = "";
    return entry;
  }
}

/** The line the model gets for an entry: its keys, or (mode `tools`) only that one was typed. */
export function entryLine(entry: string, mode: KeypadMode): string {
  if (mode === "tools")
    return entry === ""
      ? "(the caller pressed # on the phone)"
      : `(the caller typed ${entry.length} key${entry.length === 1 ? "" : "s"} on the phone; a tool can read them)`;
  if (entry === "") return "(key # pressed on the phone)";
  if (entry.length === 1) return `(key ${entry} pressed on the phone)`;
  return `(keys ${entry} pressed on the phone)`;
}
