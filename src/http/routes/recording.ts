/**
 * GET /v1/sessions/:id/recording — a session's recording as one file, assembled from the parts
 * its object wrote to the RECORDINGS bucket (src/recording/layout.ts): the audio as a WAV
 * (stereo PCM16: left what the session heard, right what it said; sample 0 is the session's
 * start, the timeline's ms 0), or with `?kind=wire` its wire recording as JSONL (the header,
 * then one entry a line). For the app's backend (API key) or a client of that session (its
 * token); read straight from the bucket, so an ended session's recording is served as well.
 * Past the retention (RECORDING_RETENTION_DAYS) a recording is deleted and answers 410.
 */
import { Hono } from "hono";
import { z } from "zod";
import {
  AudioManifest,
  audioManifestKey,
  audioPartIndex,
  audioPartKey,
  audioPartsPrefix,
  sessionRecordingsPrefix,
  WireHeader,
  wireHeaderKey,
  wirePartsPrefix,
} from "../../recording/layout.js";
import { WAV_HEADER_BYTES, wavHeader } from "../../recording/wav-header.js";
import { requireApiKeyOrSessionToken } from "../auth.js";
import type { AppContext, AppEnv } from "../context.js";
import { HttpError } from "../errors.js";
import { parseQuery, QueryToken, sessionIdParam } from "../json-body.js";
import { methodNotAllowed } from "../method-not-allowed.js";

const RecordingQuery = z.object({
  token: QueryToken,
  kind: z.enum(["audio", "wire"]).default("audio"),
});

/** Silence is sent in pieces of this many bytes (a missing part can be megabytes). */
const SILENCE_CHUNK = 64 * 1024;

export const recordingRoutes = new Hono<AppEnv>()
  .get("/:id/recording", async (c) => {
    const sessionId = sessionIdParam(c);
    const { token, kind } = parseQuery(c, RecordingQuery);
    await requireApiKeyOrSessionToken(c.var.auth, c.req.header("Authorization"), token, sessionId);
    const bucket = c.var.app.env(c.env).RECORDINGS;
    if (bucket === undefined)
      throw new HttpError(
        404,
        "no_recording",
        "this gateway keeps no recordings: it has no RECORDINGS bucket (docs/RECORDINGS.md)",
      );
    return kind === "wire" ? wireFile(c, bucket, sessionId) : audioFile(c, bucket, sessionId);
  })
  .all("/:id/recording", methodNotAllowed("GET"));

/** The manifest or header at `key`, parsed; 404 when the session has no such recording. */
async function describedBy<T>(
  bucket: R2Bucket,
  key: string,
  schema: z.ZodType<T>,
  what: string,
): Promise<T> {
  const object = await bucket.get(key);
  if (object === null)
    throw new HttpError(404, "no_recording", `this session has no ${what} recording`);
  const parsed = schema.safeParse(await object.json().catch(() => null));
  if (!parsed.success)
    throw new HttpError(500, "internal", `the ${what} recording's description is unreadable`);
  return parsed.data;
}

/** A recording past its retention is deleted (every part of the session's) and refused. */
async function refuseExpired(
  bucket: R2Bucket,
  sessionId: string,
  expiresAt: string | null,
): Promise<void> {
  if (expiresAt === null || Date.parse(expiresAt) > Date.now()) return;
  for (const key of await keysUnder(bucket, sessionRecordingsPrefix(sessionId)))
    await bucket.delete(key);
  throw new HttpError(410, "recording_expired", `the recording was kept until ${expiresAt}`);
}

async function audioFile(c: AppContext, bucket: R2Bucket, sessionId: string): Promise<Response> {
  const manifest = await describedBy(bucket, audioManifestKey(sessionId), AudioManifest, "audio");
  await refuseExpired(bucket, sessionId, manifest.expiresAt);
  const sizes = new Map<number, number>();
  for (const object of await objectsUnder(bucket, audioPartsPrefix(sessionId))) {
    const index = audioPartIndex(object.key);
    if (index !== null) sizes.set(index, object.size);
  }
  const blockBytes = manifest.channels * 2;
  const partBytes = Math.round((manifest.sampleRate * manifest.partMs) / 1000) * blockBytes;
  const count = sizes.size === 0 ? 0 : Math.max(...sizes.keys()) + 1;
  let dataBytes = 0;
  for (let i = 0; i < count; i++) dataBytes += sizes.get(i) ?? partBytes;
  let next = -1;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (next === -1) {
        controller.enqueue(wavHeader(manifest.sampleRate, manifest.channels, dataBytes));
        next = 0;
        return;
      }
      if (next >= count) {
        controller.close();
        return;
      }
      const index = next++;
      const object = sizes.has(index) ? await bucket.get(audioPartKey(sessionId, index)) : null;
      if (object === null) {
        // A part never written (nothing was heard or said), or lost: silence of its length.
        for (let sent = 0; sent < partBytes; sent += SILENCE_CHUNK)
          controller.enqueue(new Uint8Array(Math.min(SILENCE_CHUNK, partBytes - sent)));
        return;
      }
      controller.enqueue(new Uint8Array(await object.arrayBuffer()));
    },
  });
  return c.body(body, 200, {
    "Content-Type": "audio/wav",
    "Content-Length": String(WAV_HEADER_BYTES + dataBytes),
    "Content-Disposition": `inline; filename="${sessionId}.wav"`,
    "Cache-Control": "no-store",
  });
}

async function wireFile(c: AppContext, bucket: R2Bucket, sessionId: string): Promise<Response> {
  const header = await describedBy(bucket, wireHeaderKey(sessionId), WireHeader, "wire");
  await refuseExpired(bucket, sessionId, header.expiresAt);
  const keys = (await keysUnder(bucket, wirePartsPrefix(sessionId))).sort();
  let next = -1;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (next === -1) {
        controller.enqueue(new TextEncoder().encode(`${JSON.stringify(header)}\n`));
        next = 0;
        return;
      }
      const key = keys[next++];
      if (key === undefined) {
        controller.close();
        return;
      }
      const object = await bucket.get(key);
      if (object !== null) controller.enqueue(new Uint8Array(await object.arrayBuffer()));
    },
  });
  return c.body(body, 200, {
    "Content-Type": "application/jsonl; charset=utf-8",
    "Content-Disposition": `attachment; filename="${sessionId}.wire.jsonl"`,
    "Cache-Control": "no-store",
  });
}

async function objectsUnder(bucket: R2Bucket, prefix: string): Promise<R2Object[]> {
  const out: R2Object[] = [];
  let cursor: string | undefined;
  do {
    const listed = await bucket.list({ prefix, cursor });
    out.push(...listed.objects);
    cursor = listed.truncated ? listed.cursor : undefined;
  } while (cursor !== undefined);
  return out;
}

async function keysUnder(bucket: R2Bucket, prefix: string): Promise<string[]> {
  return (await objectsUnder(bucket, prefix)).map((o) => o.key);
}
