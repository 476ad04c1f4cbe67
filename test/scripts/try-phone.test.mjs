/**
 * `npm run try -- --phone --say …`, the quick, non-interactive phone call, against its own
 * `wrangler dev`: the call is placed through the carrier stand-in, each line is spoken
 * (espeak-ng, sox) and each reply heard, then it hangs up and exits 0. A wrong
 * TWILIO_AUTH_TOKEN exits 1 and says how to start the gateway with one.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, startServer } from "../../scripts/lib/harness.mjs";

const AUTH_TOKEN = "try-phone-test-token";

/** scripts/try.mjs as `npm run try` runs it; resolves with its exit code and output. */
function tryScript(args, env) {
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
      { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
    );
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
    server = await startServer({ vars: { TWILIO_AUTH_TOKEN: AUTH_TOKEN } });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

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
