import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASE, connect, type Frame, httpUrl, withKey } from "../support/gateway.js";
import { playTurn, simulatorSession } from "../support/session-flow.js";

/**
 * A client that lost its socket right after sending a line cannot know whether the line
 * arrived; it sends it again with the same `textId` when it is back (PROTOCOL.md). The line is
 * one turn either way; without the id it is two (the control).
 */
async function userLines(sessionId: string): Promise<Array<{ text: string; textId?: string }>> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(),
  });
  const { events } = (await res.json()) as {
    events: Array<{ kind: string; text: string; textId?: string }>;
  };
  return events
    .filter((e) => e.kind === "user")
    .map(({ text, textId }) => (textId === undefined ? { text } : { text, textId }));
}

/** Sends `line`, drops the socket at once, comes back resuming from `lastSeq` and sends it again. */
async function sentAcrossADrop(textId: string | undefined): Promise<{
  sessionId: string;
  frames: Frame[];
}> {
  const { sessionId, wsUrl, client } = await simulatorSession({});
  await playTurn(client, "hi");
  const lastSeq = Math.max(...client.raw.map((m) => (JSON.parse(m) as { seq?: number }).seq ?? 0));
  const frame = { type: "text", text: "book a table", ...(textId ? { textId } : {}) };
  client.send(frame);
  client.ws.close(4000, "network lost");
  const back = await connect(`${httpUrl(wsUrl)}&resumeFrom=${lastSeq}`);
  expect((await back.next()).type).toBe("ready");
  back.send(frame);
  const frames: Frame[] = [];
  let ends = 0;
  for (;;) {
    const f = await back.next(ends > 0 ? 400 : 10_000).catch(() => null);
    if (f === null) break;
    frames.push(f);
    if (f.type === "turn_complete" || f.type === "interrupted") ends++;
  }
  return { sessionId, frames };
}

describe("a line sent again after a lost socket, with its textId", () => {
  it("is one turn: one user frame (carrying the id), one answer, one turn end", async () => {
    const { sessionId, frames } = await sentAcrossADrop("line-1");
    const users = frames.filter((f) => f.type === "user");
    expect(users).toEqual([expect.objectContaining({ text: "book a table", textId: "line-1" })]);
    const turnId = users[0]!.turnId;
    expect(frames.filter((f) => f.type === "turn_complete" || f.type === "interrupted")).toEqual([
      expect.objectContaining({ type: "turn_complete", turnId }),
    ]);
    expect(await userLines(sessionId)).toEqual([
      { text: "hi" },
      { text: "book a table", textId: "line-1" },
    ]);
  });

  it("control: without a textId it is two turns", async () => {
    const { sessionId } = await sentAcrossADrop(undefined);
    expect(await userLines(sessionId)).toEqual([
      { text: "hi" },
      { text: "book a table" },
      { text: "book a table" },
    ]);
  });

  it("a textId that is not a string of 1 to 128 characters is a bad_frame; the session goes on", async () => {
    const { client } = await simulatorSession({});
    for (const textId of ["", "x".repeat(129), 7]) {
      client.send({ type: "text", text: "hi", textId });
      expect(await client.next()).toMatchObject({ type: "error", code: "bad_frame" });
    }
    const frames = await playTurn(client, "still here?");
    expect(frames.some((f) => f.type === "turn_complete")).toBe(true);
  });
});
