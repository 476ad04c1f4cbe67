import { execFile, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
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
  textsOf,
  upgradeAnswer,
} from "../../scripts/lib/harness.mjs";

const run = promisify(execFile);

/**
 * The shell a newcomer has: the machine's own Node and npm (no node_modules/.bin of this
 * repository's on the PATH, none of the npm run that started the tests in the environment),
 * npm's cache first (the registry for what it lacks).
 */
const machinePath = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((dir) => !dir.includes("node_modules"))
  .join(delimiter);
const machineEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k))),
  PATH: machinePath,
  npm_config_prefer_offline: "true",
  npm_config_audit: "false",
  npm_config_fund: "false",
  WRANGLER_SEND_METRICS: "false",
};
/** A command in that shell; resolves with its exit code and output (never rejects). */
function onMachine(command, args, cwd) {
  return new Promise((ok) => {
    const child = spawn(command, args, { cwd, env: machineEnv });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    child.once("exit", (code) => ok({ code, out }));
  });
}

// One tarball and one install for the whole file: `npm pack` here, then the starter's app,
// made and installed by `liveline init` on the machine's Node; the scratch app borrows its
// node_modules.
let work;
let tarball;
let machineNode;
let init;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "liveline-package-"));
  const packed = await run("npm", ["pack", "--pack-destination", work, "--silent"], {
    cwd: ROOT,
  });
  tarball = join(work, packed.stdout.trim().split("\n").pop());
  machineNode = (await onMachine("node", ["--version"], work)).out.trim();
  // The command the README gives, run as a newcomer runs it.
  init = await onMachine(
    "npx",
    ["--yes", "--package", tarball, "liveline", "init", "starter-app"],
    work,
  );
  // Generous: a pack (a whole tsc build) and an install of wrangler, Node and vitest, which a
  // machine busy with other work stretches to minutes.
}, 900_000);

// The apps and their installs (over a gigabyte) go with the run, after every server stopped:
// removed by a detached rm, which the run need not wait for (it takes a while on a busy disk).
afterAll(() => {
  if (work !== undefined) spawn("rm", ["-rf", work], { detached: true, stdio: "ignore" }).unref();
});

/**
 * liveline as a package: `npm pack` builds the tarball; a scratch app outside the repository
 * (test/package/app: its own agent, a tool reading its own KV binding, the simulator added) is
 * served by wrangler dev with it installed; a turn runs through it. The same app without the
 * simulator (wrangler.bare.toml) deploys (dry run: startServer bundles with it) and runs too.
 */
describe("the packed liveline tarball in an app of its own", () => {
  let scratch;
  let server;
  let bare;

  beforeAll(async () => {
    expect(init.code, init.out).toBe(0);
    scratch = join(work, "scratch-app");
    cpSync(join(ROOT, "test/package/app"), scratch, { recursive: true });
    writeFileSync(
      join(scratch, "package.json"),
      JSON.stringify({ name: "scratch-app", private: true, type: "module" }),
    );
    // The starter's install has what this app imports (liveline from the tarball, zod).
    symlinkSync(join(work, "starter-app/node_modules"), join(scratch, "node_modules"), "dir");
    // Both at once: the second costs seconds, not another start.
    [server, bare] = await Promise.all([
      startServer({
        config: join(scratch, "wrangler.toml"),
        cwd: scratch,
        vars: { SIMULATOR_KNOBS: "timeScale=0", FAULT_INJECTION: "on" },
      }),
      // A real model's key (never used: no client joins), as such a gateway would have.
      startServer({
        config: join(scratch, "wrangler.bare.toml"),
        cwd: scratch,
        vars: { GEMINI_API_KEY: "not-a-real-key" },
      }),
    ]);
  }, 240_000);

  afterAll(async () => {
    await Promise.all([server?.stop(), bare?.stop()]);
  });

  it("deploys (dry run) and runs an app without the simulator: its bundle has none of it, and it serves sessions on a real provider", async () => {
    const bundled = (s) =>
      readFileSync(
        join(
          s.bundle,
          readdirSync(s.bundle).find((f) => f.endsWith(".js")),
        ),
        "utf8",
      );
    // The stand-in's object and its faces' paths: in the app that adds it (the control), not here.
    for (const mark of ["GeminiSimulatorObject", "/simulator/gemini"]) {
      expect(bundled(server), mark).toContain(mark);
      expect(bundled(bare), mark).not.toContain(mark);
    }
    const auth = { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json" };
    const created = await fetch(`${bare.base}/v1/sessions`, {
      method: "POST",
      headers: auth,
      body: "{}",
    });
    expect(created.status).toBe(201);
    const { sessionId } = await created.json();
    const described = await fetch(`${bare.base}/v1/sessions/${sessionId}`, { headers: auth });
    expect(await described.json()).toMatchObject({ agent: "desk", provider: "gemini" });
    // The simulator is not offered, and its public face is not served (a local host).
    const refused = await fetch(`${bare.base}/v1/sessions`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ provider: "simulator" }),
    });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.code).toBe("provider_unavailable");
    expect((await fetch(`${bare.base}/simulator/gemini`)).status).toBe(404);
    expect((await fetch(`${server.base}/simulator/gemini`)).status).not.toBe(404);
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

/** A free loopback port. */
function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

/**
 * The starter (`liveline init`): an app that works on the first try on the machine's own
 * Node — its `npm run dev` answers a question by calling its tool, its own test passes — and
 * a wrangler or Node that cannot run it is refused by name when it is installed.
 */
describe("the starter: npx --package <tarball> liveline init <dir>", () => {
  let app;
  let dev;
  let base;
  /**
   * The app's own `npm test`, started once `npm run dev` serves (a user's second terminal: both
   * workerd processes up at once), and the wrong versions' installs, run while dev starts.
   */
  let tested;
  let wrongInstalls;

  beforeAll(async () => {
    expect(init.code, init.out).toBe(0);
    app = join(work, "starter-app");
    wrongInstalls = installWrongOnes(app);
    wrongInstalls.catch(() => {}); // awaited (and reported) by its test
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // `npm run dev`, as the app's README says (its port and host for the test, and the
    // simulator quicker than a person's pace: the words are the same).
    const flags = ["--port", String(port), "--ip", "127.0.0.1"];
    dev = spawn("npm", ["run", "dev", "--", ...flags, "--var", "SIMULATOR_KNOBS:timeScale=0.1"], {
      cwd: app,
      env: { ...machineEnv, CI: "1" },
      detached: true,
      stdio: "ignore",
    });
    const deadline = Date.now() + 150_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error("the starter's npm run dev did not answer");
      const up = await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    tested = onMachine("npm", ["test"], app);
  }, 180_000);

  afterAll(async () => {
    // Our own child's process group (npm, wrangler and its workerd), by its id.
    if (!dev?.pid || dev.exitCode !== null) return;
    const gone = new Promise((ok) => dev.once("exit", ok));
    process.kill(-dev.pid, "SIGTERM");
    await Promise.race([gone, new Promise((ok) => setTimeout(ok, 5_000))]);
  });

  it(`makes an app on the machine's own Node whose npm run dev answers a question by calling its tool`, async () => {
    console.log(`starter: made and installed on the machine's Node ${machineNode}`);
    for (const file of ["wrangler.toml", "src/worker.ts", "test/agent.test.ts", ".gitignore"])
      expect(existsSync(join(app, file)), file).toBe(true);
    const pkg = JSON.parse(readFileSync(join(app, "package.json"), "utf8"));
    const ours = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(pkg.devDependencies).toMatchObject({
      wrangler: ours.devDependencies.wrangler,
      node: ours.devDependencies.node,
    });
    expect(pkg.dependencies.liveline).toMatch(/^file:vendor\/liveline-.*\.tgz$/);
    // After the install, `liveline check` said what the scripts run on.
    expect(init.out).toMatch(/npm scripts run on Node 22\.\d+\.\d+; wrangler /);
    // The demo page is served (a local host).
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("liveline demo");
    // A question that calls the app's one tool, through its default agent.
    const created = await createSession({ base, ws: base.replace(/^http/, "ws") }, {});
    const { client } = await joinSession(created.wsUrl);
    const greeting = await playTurn(client, "hi", { timeoutMs: 30_000 });
    expect(greeting.ended).toBe(true);
    const { frames, ended } = await playTurn(client, "What are your opening hours?", {
      timeoutMs: 30_000,
    });
    client.close();
    expect(ended).toBe(true);
    expect(frames.filter((f) => f.type === "tool_call").map((f) => f.name)).toEqual([
      "lookup_hours",
    ]);
    expect(textsOf(frames).join("")).toContain("We are open Monday to Friday");
  });

  it("has a test of its own that passes beside its running npm run dev: npm test (liveline/testing)", async () => {
    const { code, out } = await tested;
    expect(code, out).toBe(0);
    expect(out).toMatch(/1 passed/);
  }, 180_000);

  it("refuses a wrangler or a Node it cannot run on when they are installed, naming them", async () => {
    const { wrongs, installs, refused } = await wrongInstalls;
    for (const [i, [name, , range]] of wrongs.entries()) {
      const { code, out } = installs[i];
      expect(code, out).not.toBe(0);
      expect(out).toContain("ERESOLVE");
      expect(out).toContain(`peerOptional ${name}@"${range}" from liveline@`);
    }
    // Where a lockfile already holds another, npm only warns (what you name wins): the
    // app's own check, run after each install and before dev, refuses it by name.
    expect(refused.code, refused.out).not.toBe(0);
    expect(refused.out).toContain("wrangler 4.86.0 is installed; liveline needs wrangler ^4.156.2");
    expect(refused.out).toContain("npm install --save-dev wrangler@4.156.2");
    // Control: the app as made passes the same check.
    const passed = await onMachine("npx", ["liveline", "check"], app);
    expect(passed.code, passed.out).toBe(0);
  }, 180_000);
});

/**
 * The app as made, with another wrangler or Node in its package.json, installed afresh (npm
 * refuses the tree: liveline's peer ranges); and a copy whose installed wrangler is another
 * (as `npm install -D wrangler@4.86.0` leaves it, npm only warning), started with npm run dev.
 */
async function installWrongOnes(app) {
  const pkg = JSON.parse(readFileSync(join(app, "package.json"), "utf8"));
  const wrongs = [
    ["wrangler", "4.86.0", "^4.156.2"],
    ["node", "20.19.0", ">=22.12.0"],
  ];
  const installs = Promise.all(
    wrongs.map(async ([name, wrong]) => {
      const dir = join(work, `wrong-${name}`);
      mkdirSync(dir);
      cpSync(join(app, "vendor"), join(dir, "vendor"), { recursive: true });
      const devDependencies = { ...pkg.devDependencies, [name]: wrong };
      writeFileSync(join(dir, "package.json"), JSON.stringify({ ...pkg, devDependencies }));
      return onMachine("npm", ["install"], dir);
    }),
  );
  const stale = join(work, "stale-wrangler");
  await run("cp", ["-al", app, stale]);
  const wranglerPkg = join(stale, "node_modules/wrangler/package.json");
  const manifest = JSON.parse(readFileSync(wranglerPkg, "utf8"));
  rmSync(wranglerPkg); // a hard link of the app's: replaced, not written through
  writeFileSync(wranglerPkg, JSON.stringify({ ...manifest, version: "4.86.0" }));
  const refused = onMachine("npm", ["run", "dev"], stale);
  return { wrongs, installs: await installs, refused: await refused };
}
