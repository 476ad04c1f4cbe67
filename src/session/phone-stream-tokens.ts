import { bytesToBase64Url } from "../providers/base64.js";
import { type Migration, migrate } from "./migrations.js";

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description:
      "call_tokens: single-use tokens a carrier's media stream binds to the session with",
    up(sql) {
      sql.exec(`CREATE TABLE call_tokens (
        token TEXT PRIMARY KEY,
        expires_at INTEGER NOT NULL
      )`);
    },
  },
];

/** Why a stream's token binds it, or does not. */
export type CallTokenCheck = "ok" | "expired" | "unknown";

/** 32 random bytes, base64url: every token has this length. */
const TOKEN_BYTES = 32;

/**
 * The tokens a phone call's media stream proves itself with: made by the voice webhook's
 * session (never the API key, never a session token), sent to the carrier in the answer's
 * TwiML, and taken once — the `start` that binds with it removes it, so a replayed or copied
 * token binds nothing; a start refused for another reason (not this session's call) leaves it
 * for the call's own start. Kept in the session's own storage: no secret is shared with the
 * Worker.
 */
export class CallTokenStore {
  private readonly sql: SqlStorage;

  constructor(storage: DurableObjectStorage) {
    this.sql = storage.sql;
    migrate(storage, "call_tokens", MIGRATIONS);
  }

  /** A new token, valid for `ttlMs`; the call's earlier tokens no longer bind anything. */
  issue(now: number, ttlMs: number): string {
    this.sql.exec("DELETE FROM call_tokens");
    const bytes = crypto.getRandomValues(new Uint8Array(TOKEN_BYTES));
    const token = bytesToBase64Url(bytes);
    this.sql.exec("INSERT INTO call_tokens (token, expires_at) VALUES (?, ?)", token, now + ttlMs);
    return token;
  }

  /** Whether `given` is one of the session's tokens, unexpired; nothing is spent. */
  check(given: string, now: number): CallTokenCheck {
    const found = this.find(given);
    if (found === null) return "unknown";
    return found.expires_at > now ? "ok" : "expired";
  }

  /** The token is used: a stream bound with it. It binds nothing again. */
  spend(given: string): void {
    const found = this.find(given);
    if (found !== null) this.sql.exec("DELETE FROM call_tokens WHERE token = ?", found.token);
  }

  private find(given: string): { token: string; expires_at: number } | null {
    const rows = this.sql
      .exec<{ token: string; expires_at: number }>("SELECT token, expires_at FROM call_tokens")
      .toArray();
    // Every row is compared in full, whatever matched: the time taken says nothing of a prefix.
    let found: { token: string; expires_at: number } | null = null;
    for (const row of rows) if (sameToken(row.token, given)) found = row;
    return found;
  }
}

/** Equal tokens, compared over every character (tokens have one length; a length is no secret). */
function sameToken(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
