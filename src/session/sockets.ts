import { closeReason } from "../close-reason.js";
import type { ClientLink } from "../vocabulary/client-link.js";
import type { ServerFrame } from "../vocabulary/frames.js";

export type { ClientLink };

/** A client speaking liveline's protocol; `batchReplay`: it asked for `&replay=batch`. */
export function protocolLink(ws: WebSocket, batchReplay: boolean): ClientLink {
  return {
    frame: (frame, json) => (json === undefined ? send(ws, frame) : sendText(ws, json)),
    replay: (frames) => {
      for (const json of batchReplay ? replayBatches(frames) : frames) sendText(ws, json);
    },
    audio: (pcm) => sendRaw(ws, pcm),
    close: (code, reason) => closeQuietly(ws, code, reason),
  };
}

/** A batch of a replay: at most this many frames, or about this many bytes, per message. */
const BATCH_FRAMES = 512;
const BATCH_BYTES = 256 * 1024;

/**
 * Already-encoded durable frames as `{"type":"replay","frames":[…]}` messages (a protocol
 * extension a client opts in to): a send per batch instead of one per frame, with no encoding
 * but the join.
 */
export function replayBatches(frames: readonly string[]): string[] {
  const out: string[] = [];
  let batch: string[] = [];
  let bytes = 0;
  const flush = () => {
    if (batch.length > 0) out.push(`{"type":"replay","frames":[${batch.join(",")}]}`);
    batch = [];
    bytes = 0;
  };
  for (const frame of frames) {
    if (batch.length >= BATCH_FRAMES || (batch.length > 0 && bytes + frame.length > BATCH_BYTES))
      flush();
    batch.push(frame);
    bytes += frame.length + 1;
  }
  flush();
  return out;
}

/** A frame as JSON text; a socket that is closing is skipped (its close handler cleans up). */
export function send(ws: WebSocket, frame: ServerFrame): void {
  try {
    ws.send(JSON.stringify(frame));
  } catch {
    // closing
  }
}

/** A frame already encoded (a durable frame is encoded once, for every client and the log). */
export function sendText(ws: WebSocket, json: string): void {
  try {
    ws.send(json);
  } catch {
    // closing
  }
}

/** Binary audio. */
export function sendRaw(ws: WebSocket, data: Uint8Array): void {
  try {
    ws.send(data);
  } catch {
    // closing
  }
}

export function closeQuietly(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, closeReason(reason));
  } catch {
    // Already closed.
  }
}
