/**
 * The greeter app, served from its own wrangler.toml (the `greeter` vitest project): a
 * session greets a hello with topic chips (a client tool), then answers a question from its FAQ
 * (a server tool) — once each.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

type Frame = Record<string, unknown> & { type: string };

async function frames(ws: WebSocket, until: (f: Frame) => boolean, seen: Frame[] = []) {
  return new Promise<Frame[]>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`timed out after ${JSON.stringify(seen)}`)),
      10_000,
    );
    const onMessage = (e: MessageEvent) => {
      if (typeof e.data !== "string") return;
      const frame = JSON.parse(e.data) as Frame;
      seen.push(frame);
      if (frame.type === "tool_call" && frame.runOn === "client")
        ws.send(
          JSON.stringify({ type: "tool_result", callId: frame.callId, result: { shown: true } }),
        );
      if (until(frame)) {
        clearTimeout(timer);
        ws.removeEventListener("message", onMessage);
        resolve(seen);
      }
    };
    ws.addEventListener("message", onMessage);
  });
}

describe("the greeter app", () => {
  it("greets with chips, then answers from its FAQ, each turn once", async () => {
    const res = await exports.default.fetch("http://localhost/v1/sessions", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        metadata: { simulator: { timeScale: 0, calls: "greeting:suggest_topics;*:lookup_faq" } },
      }),
    });
    expect(res.status).toBe(201);
    const { wsUrl } = (await res.json()) as { wsUrl: string };
    const up = await exports.default.fetch(wsUrl.replace(/^ws/, "http"), {
      headers: { Upgrade: "websocket" },
    });
    const ws = up.webSocket!;
    ws.accept();
    ws.send(JSON.stringify({ type: "text", text: "hi" }));
    const greeting = await frames(ws, (f) => f.type === "turn_complete");
    expect(greeting.filter((f) => f.type === "tool_call").map((f) => f.name)).toContain(
      "suggest_topics",
    );
    ws.send(JSON.stringify({ type: "text", text: "what are your opening hours?" }));
    const answer = await frames(ws, (f) => f.type === "turn_complete");
    const calls = answer.filter((f) => f.type === "tool_call").map((f) => f.name);
    expect(calls).toEqual(["lookup_faq"]);
    expect(answer.filter((f) => f.type === "turn_complete")).toHaveLength(1);
    ws.close();
  }, 30_000);

  it("has no naive relay: a session asking for the measurement arm is refused", async () => {
    const res = await exports.default.fetch("http://localhost/v1/sessions", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ metadata: { naive: true } }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("bad_request");
    expect(body.error.message).toMatch(/no naive relay/);
  });
});
