/**
 * The HTTP error answer of PROTOCOL.md ("HTTP errors"): `{"error":{"code","message"}}` as
 * JSON with its status. The one writer of that body: the Hono app, the session object, the
 * demo routes and the simulator all answer through it. Web-standard only (Response).
 */
export function jsonError(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return Response.json({ error: { code, message } }, { status, headers });
}
