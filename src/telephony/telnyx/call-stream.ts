/**
 * A Telnyx call's media stream as a client of the session: telephony/line-link.ts over
 * Telnyx's messages (stream-messages.ts). The line's codec is the one its start declared
 * (`media_format.encoding`: PCMU or PCMA, both ways, as the answer asked); its audio goes out
 * as `media` of raw RTP payload in whole 20 ms frames, each batch followed by a `mark`; a
 * `clear` empties Telnyx's queue and sends back the marks it held.
 */

import { ALAW_LINE, type LineCodec, MULAW_LINE } from "../../audio/line-audio.js";
import { closeReason } from "../../close-reason.js";
import { base64ToBytes, bytesToBase64 } from "../../providers/base64.js";
import type { AudioEncoding } from "../../vocabulary/provider-adapter.js";
import type { CallStreamHooks, CallStreamLink } from "../carrier-contract.js";
import { LineLink } from "../line-link.js";
import type { TelnyxStreamCommand } from "./stream-messages.js";

/** The line's codec from the start's encoding (the attachment's `line`). */
export function telnyxLineCodec(line: string | undefined): LineCodec {
  return line === "PCMA" ? ALAW_LINE : MULAW_LINE;
}

export function telnyxStreamLink(
  ws: WebSocket,
  hooks: CallStreamHooks,
  sessionAudio: AudioEncoding,
  line: string | undefined,
): CallStreamLink {
  const send = (command: TelnyxStreamCommand) => {
    try {
      ws.send(JSON.stringify(command));
    } catch {
      // Closing: its close handler ends the call.
    }
  };
  return new LineLink(
    {
      bytesOf(payload) {
        if (typeof payload !== "string") return null;
        try {
          return base64ToBytes(payload);
        } catch {
          return null;
        }
      },
      audio: (bytes) => send({ event: "media", media: { payload: bytesToBase64(bytes) } }),
      mark: (name) => send({ event: "mark", mark: { name } }),
      clear: () => send({ event: "clear" }),
      close(code, reason) {
        try {
          ws.close(code, closeReason(reason));
        } catch {
          // Already closed.
        }
      },
    },
    hooks,
    telnyxLineCodec(line),
    sessionAudio,
  );
}
