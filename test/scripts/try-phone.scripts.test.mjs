/**
 * `npm run try -- --phone --say …`, the quick, non-interactive phone call, against the scripts
 * project's shared `wrangler dev` (test/support/scripts-gateway-setup.mjs, its TWILIO_AUTH_TOKEN): the call is placed through the carrier stand-in, each line is spoken
 * (espeak-ng, sox) and each reply heard, then it hangs up and exits 0. A wrong
 * TWILIO_AUTH_TOKEN exits 1 and says how to start the gateway with one. And `--provider
 * gpt-live` on a gateway without a key reaches the simulator's GPT-Live wire.
 */
import { spawn } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { API_KEY } from "../../scripts/lib/harness.mjs";
import { TWILIO_AUTH_TOKEN as AUTH_TOKEN } from "../support/scripts-gateway-setup.mjs";
import { sharedGateway } from "../support/shared-gateway.mjs";

/** scripts/try.mjs as `npm run try` runs it; resolves with its exit code and output. */
function tryScript(args, env, input = null) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "./scripts/lib/ts-resolve.mjs",
        "--experimental-strip-types",
        "--no-warnings",
        "scripts/try.mjs",
        ...args,
      ],
      {
        env: { ...process.env, ...env },
        stdio: [input === null ? "ignore" : "pipe", "pipe", "pipe"],
      },
    );
    // Typed lines, then the end of input (try answers them in turn, then closes).
    if (input !== null) child.stdin.end(input.map((line) => `${line}\n`).join(""));
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 150_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe("npm run try -- --phone", () => {
  let server;
  beforeAll(async () => {
    server = await sharedGateway();
  }, 160_000);

  it("--say places the call, speaks each line, hears each reply, hangs up and exits 0", async () => {
    const { code, out } = await tryScript(
      ["--phone", "--say", "What are your opening hours?", "--say", "#5", server.base],
      { TWILIO_AUTH_TOKEN: AUTH_TOKEN, API_KEY },
    );
    expect(code, out).toBe(0);
    expect(out).toMatch(/session [0-9a-f-]{36}/);
    // The greeting, then one reply per line.
    expect(out.match(/← heard \d+\.\d s of speech/g), out).toHaveLength(3);
    expect(out).toContain('→ saying "What are your opening hours?"');
    expect(out).toContain("→ pressed 5");
    // The record, read with the API key: the question as heard, the key press, the replies.
    expect(out).toContain("caller (heard): ");
    expect(out).toContain("caller: (key 5 pressed on the phone)");
    expect(out.match(/^ {2}liveline: \S/gm)?.length ?? 0, out).toBeGreaterThanOrEqual(3);
    // The caller hangs up, or the agent did after its goodbye (end_call) was heard.
    expect(out).toMatch(/^(hung up|liveline hung up \(1000 )/m);
    expect(out).not.toContain("protocol violations");
  });

  it("--provider gpt-live without a key: the simulator speaks GPT-Live's wire, and a question calls its tool", async () => {
    const { code, out } = await tryScript(["--provider", "gpt-live", server.base], { API_KEY }, [
      "What are your opening hours?",
    ]);
    expect(code, out).toBe(0);
    expect(out).toContain(
      "(no key for gpt-live on this gateway: the built-in simulator speaks the gpt-live wire)",
    );
    expect(out).toMatch(/"type":"tool_call".*"name":"lookup_faq"/);
    expect(out).toContain("We are open Monday to Friday");
    const sessionId = /session ([0-9a-f-]{36})/.exec(out)?.[1];
    const described = await fetch(`${server.base}/v1/sessions/${sessionId}`, {
      headers: { Authorization: `Bearer ${API_KEY}` },
    }).then((r) => r.json());
    expect(described.model).toBe("gpt-live-1");
  });

  it("a wrong TWILIO_AUTH_TOKEN exits 1 and says how to start the gateway with one", async () => {
    const { code, out } = await tryScript(["--phone", "--say", "hi", server.base], {
      TWILIO_AUTH_TOKEN: "not-the-gateways-token",
    });
    expect(code, out).toBe(1);
    expect(out).toContain("the voice webhook answered 403");
    expect(out).toContain("npm run dev -- --var TWILIO_AUTH_TOKEN:");
  });

  it("--carrier plivo goes through Plivo's stand-in, and names the var a gateway without it needs", async () => {
    const { code, out } = await tryScript(
      ["--phone", "--carrier", "plivo", "--say", "hi", server.base],
      {},
    );
    expect(code, out).toBe(1);
    // The gateway's own refusal, from its Plivo route.
    expect(out).toContain("phone calls need PLIVO_AUTH_TOKEN");
    expect(out).toContain("the voice webhook answered 503");
    expect(out).toContain("npm run dev -- --var PLIVO_AUTH_TOKEN:dev-plivo-auth-token");
  });
});
