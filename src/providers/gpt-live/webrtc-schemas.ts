/**
 * GPT-Live's WebRTC creation (`POST /v1/live/sessions`), as zod schemas: what liveline sends
 * is strict (a stray field is a bug here, caught before it is sent: the service refuses
 * unknown fields), what it reads is lenient (fields the service adds are dropped).
 *
 * From the official SDK's generated types, `openai` 7.57.0 `resources/live/live.d.ts`
 * (`Live.create`: `LiveCreateParams`, `MediaSessionConfig`, `LiveCreateResponse`). Where the
 * brief (GPT-LIVE.md, Connecting) and the types differ, the types win:
 * - the request's `session` is a `MediaSessionConfig`, not the WebSocket's `SessionConfig`:
 *   no `audio.format` (the media transport negotiates the format), and `safety_identifier`
 *   besides;
 * - the answer is JSON `{session: {id}, transport: {type: "webrtc", sdp}}`, not a bare SDP.
 */
import { z } from "zod";
import { SessionConfig } from "./schemas.js";

/** A call's audio settings: the voice only (the format is the media transport's). */
const MediaAudio = SessionConfig.shape.audio.unwrap().omit({ format: true });

/** A WebRTC session's startup config: a WebSocket's, without the audio format. */
export const MediaSessionConfig = SessionConfig.omit({ audio: true }).extend({
  audio: MediaAudio.optional(),
  /** A stable id of the end user, for the service's abuse detection. */
  safety_identifier: z.string().nullable().optional(),
});

const WebRtcTransport = z.object({ type: z.literal("webrtc"), sdp: z.string().min(1) }).strict();

/** The creation request: the session's config and the device's SDP offer. */
export const LiveCreateParams = z
  .object({ session: MediaSessionConfig, transport: WebRtcTransport })
  .strict();

/**
 * The service's answer: the new session's id (for its sideband) and the SDP answer the
 * device applies as its peer's remote description.
 */
export const LiveCreateResponse = z.object({
  session: z.object({ id: z.string().min(1) }),
  transport: z.object({ type: z.literal("webrtc"), sdp: z.string().min(1) }),
});

export type MediaSessionConfig = z.infer<typeof MediaSessionConfig>;
export type LiveCreateParams = z.infer<typeof LiveCreateParams>;
export type LiveCreateResponse = z.infer<typeof LiveCreateResponse>;
