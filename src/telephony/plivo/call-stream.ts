/**
 * A Plivo call's media stream as a client of the session: telephony/line-link.ts over
 * Plivo's messages (stream-messages.ts). The line is μ-law 8 kHz (the answer's contentType);
 * its audio goes out as `playAudio` in whole 20 ms frames, each batch followed by a
 * `checkpoint`, which Plivo answers with `playedStream` once that audio has played. A
 * `clearAudio` drops the queue, and the checkpoints in it never come back: the link counts
 * them as moot at once.
 */

import { MULAW_LINE } from "../../audio/line-audio.js";
import { closeReason } from "../../close-reason.js";
import { base64ToBytes, bytesToBase64 } from "../../providers/base64.js";
import type { AudioEncoding } from "../../vocabulary/provider-adapter.js";
import type { CallStreamHooks, CallStreamLink } from "../carrier-contract.js";
import { LineLink } from "../line-link.js";
import type { PlivoStreamCommand } from "./stream-messages.js";

export function plivoStreamLink(
  ws: WebSocket,
  streamId: string,
  hooks: CallStreamHooks,
  sessionAudio: AudioEncoding,
): CallStreamLink {
  const send = (command: PlivoStreamCommand) => {
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
      audio: (bytes) =>
        send({
          event: "playAudio",
          media: { contentType: "audio/x-mulaw", sampleRate: 8000, payload: bytesToBase64(bytes) },
        }),
      mark: (name) => send({ event: "checkpoint", streamId, name }),
      clear: () => send({ event: "clearAudio", streamId }),
      close(code, reason) {
        try {
          ws.close(code, closeReason(reason));
        } catch {
          // Already closed.
        }
      },
    },
    hooks,
    MULAW_LINE,
    sessionAudio,
  );
}
