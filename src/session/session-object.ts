import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.js";

/** One live session: owns the model socket and every client socket of that session. */
export class SessionObject extends DurableObject<Env> {
  override async fetch(_request: Request): Promise<Response> {
    return Response.json(
      { error: { code: "not_implemented", message: "sessions are not served yet" } },
      { status: 501 },
    );
  }
}
