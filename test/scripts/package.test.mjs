import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  API_KEY,
  createSession,
  history,
  join as joinSession,
  playTurn,
  ROOT,
  startServer,
  upgradeAnswer,
} from "../../scripts/lib/harness.mjs";

const run = promisify(execFile);

/**
 * liveline as a package (issue 13): `npm pack` builds the tarball; a scratch app outside the
 * repository (test/package/app: its own agent, a tool reading its own KV binding) installs
 * it and is served by wrangler dev; a turn runs through it.
 */
describe("the packed liveline tarball in an app of its own", () => {
  let scratch;
  let tarball;
  let server;

  beforeAll(async () => {
    const work = mkdtempSync(join(tmpdir(), "liveline-package-"));
    const packed = await run("npm", ["pack", "--pack-destination", work, "--silent"], {
      cwd: ROOT,
    });
    tarball = join(work, packed.stdout.trim().split("\n").pop());
    scratch = join(work, "app");
    cpSync(join(ROOT, "test/package/app"), scratch, { recursive: true });
    const ours = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    writeFileSync(
      join(scratch, "package.json"),
      JSON.stringify({
        name: "scratch-app",
        private: true,
        type: "module",
        dependencies: { liveline: `file:${tarball}`, zod: ours.dependencies.zod },
      }),
    );
    // Everything but the tarball is in npm's cache after `npm ci`; the registry if not.
    const install = ["install", "--no-audit", "--no-fund", "--ignore-scripts"];
    await run("npm", [...install, "--offline"], { cwd: scratch }).catch(() =>
      run("npm", [...install, "--prefer-offline"], { cwd: scratch }),
    );
    server = await startServer({
      config: join(scratch, "wrangler.toml"),
      cwd: scratch,
      vars: { SIMULATOR_KNOBS: "timeScale=0", FAULT_INJECTION: "on" },
    });
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
  });

  it("ships ESM with declarations and nothing that reaches back into src/", () => {
    const dist = join(scratch, "node_modules/liveline/dist");
    const files = walk(dist);
    expect(files.some((f) => f.endsWith("index.js"))).toBe(true);
    expect(files.some((f) => f.endsWith("index.d.ts"))).toBe(true);
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
    for (const file of files.filter((f) => f.endsWith(".js") || f.endsWith(".d.ts"))) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/from\s+"(\.[^"]+)"/g)) {
        const target = resolve(dirname(file), m[1]);
        const exists = [target, target.replace(/\.js$/, ".d.ts")].some((t) => safeStat(t));
        expect(exists, `${file} imports ${m[1]}`).toBe(true);
      }
    }
  });

  it("asks the app's agent function at creation: it may refuse the session", async () => {
    const res = await fetch(`${server.base}/v1/sessions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json" },
      body: JSON.stringify({ agent: "shop" }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({
      code: "agent_refused",
      message: expect.stringMatching(/metadata.user is required/),
    });
  });

  it("keeps a session whose agent function throws at a restart readable and deletable; connecting says why", async () => {
    const created = await createSession(server, {
      agent: "fragile",
      metadata: { failAfter: Date.now() + 300 },
    });
    await new Promise((r) => setTimeout(r, 500));
    const auth = { Authorization: `Bearer ${API_KEY}` };
    const at = (path) => `${server.base}/v1/sessions/${created.sessionId}${path}`;
    expect((await fetch(at("/restart"), { method: "POST", headers: auth })).status).toBe(200);
    const upgrade = await upgradeAnswer(created.wsUrl.replace(/^ws/, "http"));
    expect(upgrade.status).toBe(503);
    expect(JSON.parse(upgrade.body).error).toMatchObject({
      code: "agent_unavailable",
      message: expect.stringMatching(/no longer takes the session/),
    });
    expect((await fetch(at("/history"), { headers: auth })).status).toBe(200);
    expect((await fetch(at(""), { headers: auth })).status).toBe(200);
    expect((await fetch(at(""), { method: "DELETE", headers: auth })).status).toBe(200);
  });

  it("runs a turn through the app's own agent and its tool reading the app's KV binding", async () => {
    const put = await fetch(`${server.base}/prices/starter`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${API_KEY}` },
      body: "12 euros a month",
    });
    expect(put.status).toBe(204);
    const created = await createSession(server, {
      agent: "shop",
      metadata: { user: "ada", simulator: { calls: "*:lookup_price" } },
    });
    const { client } = await joinSession(created.wsUrl);
    const { frames, ended } = await playTurn(client, "what does the starter plan cost?");
    client.close();
    expect(ended).toBe(true);
    expect(frames.filter((f) => f.type === "turn_complete")).toHaveLength(1);
    const described = await fetch(`${server.base}/v1/sessions/${created.sessionId}`, {
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    expect(await described.json()).toMatchObject({
      agent: "shop",
      model: "gemini-3.1-flash-live-preview",
    });
    const events = await history(server, created.sessionId);
    const results = events.filter((e) => e.kind === "tool_result");
    expect(results).toHaveLength(1);
    expect(results[0].result).toMatchObject({
      plan: "starter",
      price: "12 euros a month",
      quotedFor: "ada",
    });
  });
});

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

function safeStat(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
