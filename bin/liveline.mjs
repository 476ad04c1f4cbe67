#!/usr/bin/env node
// liveline's command line (the package's `bin`), on the machine's own Node (≥ 18):
//
//   liveline init <dir> [--from <liveline tarball>] [--no-install]
//     A new app in <dir>, working on the first try: wrangler.toml with the bindings and
//     migrations, a Worker with one agent and one tool, a test through liveline/testing, the
//     wrangler and Node it needs pinned (npm scripts run on Node 22 through the `node`
//     devDependency, whatever the machine's Node), and `npm run dev` serving the demo page.
//     liveline is not on the npm registry: the app carries its tarball in vendor/ (this
//     package packed again, or --from). Then `npm install`, unless --no-install.
//       npm pack                                          # in liveline's repository
//       npx --package ./liveline-0.1.0.tgz liveline init my-app
//
//   liveline check
//     What an app runs with: the Node of its npm scripts and its wrangler. An app made by init
//     runs it after each `npm install` (its `prepare`: a wrong one fails the install) and
//     before `npm run dev`. Exits 1, naming the fix, when they cannot run liveline — also where
//     npm let a wrong one in: `npm install -D wrangler@<old>` overrides liveline's peer range
//     with a warning only (npm's rule: what you name wins), and runs no `prepare`.
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const OWN = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const TEMPLATE = join(ROOT, "examples/starter");
/** The Node wrangler needs (and so liveline's tools): as the peer range says. */
const NODE_NEEDED = [22, 12];
const USAGE = `Usage: liveline init <dir> [--from <liveline tarball>] [--no-install]
       liveline check
  e.g. npx --package ./liveline-${OWN.version}.tgz liveline init my-app`;

const GITIGNORE = `node_modules
.wrangler/
.dev.vars
test-results/
`;

function fail(message) {
  console.error(`liveline: ${message}`);
  process.exit(1);
}

/** `[major, minor]` of a version string such as "v22.23.3" or "22.23.3". */
function majorMinor(version) {
  const [major = 0, minor = 0] = version.replace(/^v/, "").split(".").map(Number);
  return [major, minor];
}
const atLeast = ([a, b], [c, d]) => a > c || (a === c && b >= d);

/** `[major, minor, patch]` of "4.156.2" (a pre-release tag ignored). */
function triple(version) {
  const [major = 0, minor = 0, patch = 0] = version
    .replace(/^[v=^>~\s]+/, "")
    .split("-")[0]
    .split(".")
    .map(Number);
  return [major, minor, patch];
}
function compare(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}
/** Whether `version` is in `range`: the forms liveline's peer ranges use (`^x.y.z`, `>=x.y.z`). */
function satisfies(version, range) {
  const v = triple(version);
  const floor = triple(range);
  if (range.startsWith("^")) return v[0] === floor[0] && compare(v, floor) >= 0;
  if (range.startsWith(">=")) return compare(v, floor) >= 0;
  return compare(v, floor) === 0;
}

/** A name wrangler takes: lowercase letters, digits and dashes. */
function workerName(dir) {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return name === "" ? "liveline-app" : name.slice(0, 63);
}

/** The tarball the app depends on, in <target>/vendor: --from's, or this package packed. */
function vendorTarball(target, from) {
  const vendor = join(target, "vendor");
  mkdirSync(vendor, { recursive: true });
  if (from !== undefined) {
    if (!from.endsWith(".tgz") || !existsSync(from))
      fail(`--from must name a liveline .tgz that exists (npm pack makes one), not "${from}"`);
    copyFileSync(from, join(vendor, basename(from)));
    return basename(from);
  }
  // A source checkout builds dist/ as it packs (its prepack); an installed copy is packed as
  // it is (its prepack would rebuild from sources it does not have).
  const checkout = existsSync(join(ROOT, "tsconfig.build.json"));
  const args = ["pack", ROOT, "--pack-destination", vendor, "--silent"];
  if (!checkout) args.push("--ignore-scripts");
  const packed = spawnSync("npm", args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (packed.status !== 0) fail(`npm pack of ${ROOT} failed`);
  return packed.stdout.trim().split("\n").pop();
}

function init(args) {
  let dir;
  let from;
  let install = true;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--no-install") install = false;
    else if (arg === "--from") from = args[++i];
    else if (arg.startsWith("--")) fail(`unknown option ${arg}\n${USAGE}`);
    else if (dir === undefined) dir = arg;
    else fail(`one folder, please\n${USAGE}`);
  }
  if (dir === undefined) fail(`init needs the new app's folder\n${USAGE}`);
  const target = resolve(dir);
  if (existsSync(target) && readdirSync(target).length > 0)
    fail(`${target} exists and is not empty: init makes a new folder`);
  mkdirSync(target, { recursive: true });
  cpSync(TEMPLATE, target, { recursive: true });
  const name = workerName(target);
  const toml = join(target, "wrangler.toml");
  writeFileSync(
    toml,
    readFileSync(toml, "utf8").replace(/^name = ".*"$/m, `name = ${JSON.stringify(name)}`),
  );
  writeFileSync(join(target, ".gitignore"), GITIGNORE);
  const tarball = vendorTarball(target, from === undefined ? undefined : resolve(from));
  const dev = OWN.devDependencies ?? {};
  const pkg = {
    name,
    version: "0.1.0",
    private: true,
    type: "module",
    scripts: {
      dev: "wrangler dev",
      test: "vitest run",
      deploy: "wrangler deploy",
      // After each install, and before dev: the Node the scripts run on and the wrangler.
      prepare: "liveline check",
      predev: "liveline check",
    },
    dependencies: { liveline: `file:vendor/${tarball}`, zod: OWN.dependencies.zod },
    // wrangler exactly as liveline was tested with; Node 22 for every script (the machine's
    // own may be older); vitest for the test.
    devDependencies: { node: dev.node, vitest: dev.vitest, wrangler: dev.wrangler },
    // The install scripts these need (npm runs only those allowed).
    allowScripts: OWN.allowScripts,
  };
  writeFileSync(join(target, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  console.log(`liveline: made ${target} (agent "assistant", tool "lookup_hours")`);
  if (install) {
    const done = spawnSync("npm", ["install", "--no-audit", "--no-fund"], {
      cwd: target,
      stdio: "inherit",
    });
    if (done.status !== 0) fail(`npm install failed in ${target} (above: what npm said)`);
  }
  console.log(`
Next:
  cd ${dir}${install ? "" : "\n  npm install"}
  npm run dev     # http://localhost:8787: the demo page, the built-in simulator as the model
  npm test        # your agent through liveline/testing`);
}

/** The Node an app's scripts run on, npm's own, and the wrangler installed. */
function check() {
  const scripts = process.versions.node;
  const npm = /\bnode\/v(\S+)/.exec(process.env.npm_config_user_agent ?? "")?.[1] ?? scripts;
  if (!atLeast(majorMinor(scripts), NODE_NEEDED))
    fail(
      `npm scripts run on Node ${scripts}; liveline needs node ${OWN.peerDependencies.node} (wrangler does): npm install --save-dev node@22 (scripts then run on it, whatever the machine's Node)`,
    );
  let wrangler = "not installed";
  try {
    const req = join(process.cwd(), "node_modules/wrangler/package.json");
    wrangler = JSON.parse(readFileSync(req, "utf8")).version;
  } catch {
    // none: said below
  }
  const wanted = OWN.peerDependencies.wrangler;
  if (wrangler !== "not installed" && !satisfies(wrangler, wanted))
    fail(
      `wrangler ${wrangler} is installed; liveline needs wrangler ${wanted} (its workerd runs the compatibility_date liveline's apps use): npm install --save-dev wrangler@${triple(wanted).join(".")}`,
    );
  console.log(`liveline: npm scripts run on Node ${scripts}; wrangler ${wrangler}.`);
  if (!atLeast(majorMinor(npm), NODE_NEEDED))
    console.log(
      `liveline: npm itself runs on Node ${npm}, so it warns EBADENGINE for the packages that need Node 22 (wrangler's): they run on Node ${scripts}, nothing to fix.`,
    );
}

const [command, ...rest] = process.argv.slice(2);
if (command === "init") init(rest);
else if (command === "check") check();
else if (command === undefined || command === "--help" || command === "-h") console.log(USAGE);
else fail(`unknown command "${command}"\n${USAGE}`);
