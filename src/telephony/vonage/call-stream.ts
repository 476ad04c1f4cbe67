/**
 * A Vonage call's WebSocket as a client of the session: telephony/line-link.ts over Vonage's
 * frames (stream-messages.ts). The line is 16-bit linear PCM at the rate its first message
 * declared (16 kHz, as the answer asked: the protocol's own input rate, so the caller's audio
 * goes to the session as it came); the model's audio goes out as binary frames of exactly
 * 20 ms each, each batch followed by a `notify`, which Vonage answers once that audio has
 * played. A `clear` empties Vonage's buffer; the notifies in it are not waited for.
 */

import type { LineCodec } from "../../audio/line-audio.js";
import { closeReason } from "../../close-reason.js";
import type { AudioEncoding } from "../../vocabulary/provider-adapter.js";
import type { CallStreamHooks, CallStreamLink } from "../carrier-contract.js";
import { LineLink } from "../line-link.js";
import type { VonageStreamCommand } from "./stream-messages.js";

/** The line from its declared content-type (the attachment's `line`). */
export function vonageLineCodec(line: string | undefined): LineCodec {
  return { kind: "l16", rate: line === "audio/l16;rate=8000" ? 8000 : 16000 };
}

export function vonageStreamLink(
  ws: WebSocket,
  hooks: CallStreamHooks,
  sessionAudio: AudioEncoding,
  line: string | undefined,
): CallStreamLink {
  const codec = vonageLineCodec(line);
  const frameBytes = codec.kind === "l16" ? (codec.rate / 1000) * 2 * 20 : 160;
  const sendText = (command: VonageStreamCommand) => {
    try {
      ws.send(JSON.stringify(command));
    } catch {
      // Closing: its close handler ends the call.
    }
  };
  return new LineLink(
    {
      bytesOf: (payload) =>
        typeof payload === "string" || payload.length % 2 !== 0 ? null : payload,
      audio(bytes) {
        // One message per 20 ms frame: Vonage takes no other size.
        try {
          for (let at = 0; at < bytes.length; at += frameBytes)
            ws.send(bytes.slice(at, at + frameBytes));
        } catch {
          // Closing.
        }
      },
      mark: (name) => sendText({ action: "notify", payload: { name } }),
      clear: () => sendText({ action: "clear" }),
      close(code, reason) {
        try {
          ws.close(code, closeReason(reason));
        } catch {
          // Already closed.
        }
      },
    },
    hooks,
    codec,
    sessionAudio,
  );
}
