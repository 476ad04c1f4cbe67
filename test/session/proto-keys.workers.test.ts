import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASE, connect, httpUrl, withKey } from "../support/gateway.js";
import { framesUntil, simulatorSession } from "../support/session-flow.js";

const SENT = '{"__proto__":{"polluted":true},"shown":true,"nested":{"__proto__":[1,2]}}';

describe("a `__proto__` key in a client's tool result", () => {
  it("is kept end to end: in the tool_result frame, in the replay and in /history", async () => {
    const session = await simulatorSession({ calls: "greeting:suggest_topics" });
    const { client, sessionId } = session;
    client.send({ type: "text", text: "hi" });
    const call = (
      await framesUntil(client, (f) => f.type === "tool_call" && f.runOn === "client")
    ).at(-1)!;
    client.send(`{"type":"tool_result","callId":${JSON.stringify(call.callId)},"result":${SENT}}`);
    const frames = await framesUntil(client, (f) => f.type === "tool_result" || f.type === "error");
    const result = frames.at(-1)!;
    expect(result.type).toBe("tool_result");
    expect(JSON.stringify(result.result)).toBe(SENT);
    client.close();

    const replay = await connect(`${httpUrl(session.wsUrl)}&resumeFrom=0`);
    const replayed = (await framesUntil(replay, (f) => f.type === "tool_result")).at(-1)!;
    expect(JSON.stringify(replayed.result)).toBe(SENT);
    replay.close();

    const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
      headers: withKey(),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(`"result":${SENT}`);
  });
});
