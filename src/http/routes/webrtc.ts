import { Hono } from "hono";
import { z } from "zod";
import type { DirectCallAnswer } from "../../contracts/session-api.js";
import { apiKeyFirst } from "../api-key-first.js";
import { limitBody } from "../body-limit.js";
import type { AppEnv } from "../context.js";
import { HttpError } from "../errors.js";
import { parseJsonBody, sessionIdParam } from "../json-body.js";
import { methodNotAllowed } from "../method-not-allowed.js";
import { openSession } from "./sessions.js";

/** A browser's offer is a few KiB; anything past this is no offer. */
const MAX_WEBRTC_BODY_BYTES = 64 * 1024;

const WebRtcBody = z
  .object({
    /** The browser's SDP offer (RTCPeerConnection's localDescription.sdp). */
    sdp: z.string().startsWith("v=", "must be an SDP offer (it starts with v=0)"),
  })
  // A misspelt field is refused by name, never ignored.
  .strict();

type Refusal = Extract<DirectCallAnswer, { refused: string }>;

/** Why no call was made, as the HTTP answer says it. */
function refusal({ refused, message }: Refusal): HttpError {
  switch (refused) {
    case "ended":
      return new HttpError(410, "session_ended", message);
    case "agent_unavailable":
      return new HttpError(503, "agent_unavailable", message);
    case "unsupported":
      return new HttpError(400, "webrtc_unsupported", message);
    case "model_failed":
      return new HttpError(503, "model_unavailable", message);
    case "offer_refused":
      return new HttpError(400, "offer_refused", message);
    case "service_failed":
      return new HttpError(502, "upstream_error", message);
    default: {
      const unreachable: never = refused;
      throw new Error(`unknown refusal ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * POST /v1/sessions/:id/webrtc — a browser's direct WebRTC call with the model (GPT-Live):
 * the session's object creates it with the server's key and becomes its sideband; the answer
 * is what the browser applies as its peer's remote description (never the key).
 */
export const webrtcRoutes = new Hono<AppEnv>()
  .post("/:id/webrtc", apiKeyFirst, limitBody(MAX_WEBRTC_BODY_BYTES), async (c) => {
    const sessionId = sessionIdParam(c);
    const body = await parseJsonBody(c, WebRtcBody);
    const stub = await openSession(c, sessionId);
    const result = await stub.placeDirectCall(body.sdp);
    if ("refused" in result) throw refusal(result);
    const { serviceSessionId, sdp } = result.answer;
    return c.json({ sessionId, type: "answer", sdp, serviceSessionId }, 201);
  })
  .all("/:id/webrtc", methodNotAllowed("POST"));
