import { exports } from "cloudflare:workers";
import { verify } from "hono/jwt";
import { describe, expect, it } from "vitest";
import { BASE, createSession, TOKEN_SECRET } from "../support/gateway.js";

/**
 * Found by the attack of 2026-12-02: a session token with a trailing `=`, or with the
 * signature's unused bits flipped, opened the session as the token itself did — one token,
 * several strings. Only the string `sign` wrote is the token now.
 */
async function historyWith(sessionId: string, token: string): Promise<number> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return res.status;
}

/** The token with its last character's unused low bits set (a 43-character HS256 signature). */
function unusedBitsFlipped(token: string): string {
  const last = token.at(-1)!;
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  return token.slice(0, -1) + alphabet[alphabet.indexOf(last) ^ 1]!;
}

describe("a session token's string", () => {
  it("is the token as issued; a padded or bit-flipped spelling of it is refused (401)", async () => {
    const { sessionId, token } = await createSession();
    expect(await historyWith(sessionId, token)).toBe(200);
    expect(await historyWith(sessionId, `${token}=`)).toBe(401);
    expect(await historyWith(sessionId, unusedBitsFlipped(token))).toBe(401);
  });

  it("control: the JWT decoder alone takes both spellings", async () => {
    const { token } = await createSession();
    await expect(verify(`${token}=`, TOKEN_SECRET, "HS256")).resolves.toBeDefined();
    await expect(verify(unusedBitsFlipped(token), TOKEN_SECRET, "HS256")).resolves.toBeDefined();
  });
});
