/**
 * npm run check:imports [-- root] — the import graph of src/ must have no cycle and no upward import,
 * the product's entry (src/index.ts: what an app imports as "liveline" and `wrangler deploy`
 * ships) must reach nothing of the simulator, a measurement arm or liveline/testing (they are
 * opt-in entries: liveline/simulator, liveline/testing, scripts/measurement),
 * and no two files under src/ share a base name unless they play the same role: a folder's
 * entry point (index.ts), or the same file in sibling folders of one kind (providers/gemini
 * and providers/openai, the simulator's gemini and openai faces).
 *
 * Layers, lowest first; a module may import its own layer or a lower one. Each layer is a
 * folder or a file; no layer reaches into another's folder:
 *   vocabulary (the shared words: model events and commands, log events, frames),
 *   json-limits, version, safe-equal (a constant-time compare of secrets) and outbound (a
 *   deadline for an outbound request's headers), audio (codecs, the resampler), core, history,
 *   var-schemas (how Worker vars are read), providers, telephony (phone calls: the carriers'
 *   wire), recording (a session's audio and wire as recorded),
 *   provider-registry and carrier-registry (every built-in provider and those an app adds, every carrier), worker-config (the Worker's vars with every provider's), agents (definitions),
 *   mcp (an agent's remote MCP servers: their tools as server tools, through the SDK),
 *   metering (prices, cost and latency: pure sums over what a session recorded),
 *   telemetry (a turn's spans in OpenTelemetry's terms, their OTLP encoding, the exporter),
 *   app-options (createLiveline's options made ready), contracts (the Worker's env, the
 *   session's RPC surface), session, http, liveline.ts (createLiveline), index.ts (the
 *   package's exports); then the opt-in entry above the product: simulator (liveline/simulator:
 *   a stand-in service that speaks each provider's wire, the provider that reaches it, a
 *   carrier stand-in, and the extension an app adds). Measurement arms (the naive relay) live
 *   in scripts/measurement, beside the Worker that uses them: a src/measurement/ is refused.
 * Relative imports only (packages are not checked). Prints every violation and exits 1.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(process.argv[2] ?? join(import.meta.dirname, ".."));
const SRC = join(ROOT, "src");

const LAYERS = [
  ["vocabulary/"],
  // The client library (liveline/client): it takes the frames' types, and nothing that runs.
  ["client/"],
  // liveline/testing: the app's Worker started for its tests, driven through the client.
  ["testing/"],
  ["json-limits.ts", "version.ts", "safe-equal.ts", "outbound.ts", "close-reason.ts"],
  // Audio: the codecs (μ-law, A-law, PCM16 bytes, a line's codec), the one resampler, the
  // check of a line's law; low, so providers, telephony, recording, the simulator and the
  // session all take their audio from here.
  ["audio/"],
  ["core/"],
  ["history/"],
  ["var-schemas.ts"],
  ["providers/"],
  // Phone calls: the carriers' wire (Twilio Media Streams, TwiML, webhook signatures); below
  // the simulator, whose carrier stand-in speaks that wire.
  ["telephony/"],
  // Recordings: a session's audio placed on its timeline, the wire's entries, their layout in
  // the bucket (pure; the session writes them, the http route assembles them).
  ["recording/"],
  ["provider-registry.ts", "carrier-registry.ts"],
  ["worker-config.ts"],
  ["agents/"],
  // Tools from remote MCP servers, through the official SDK's client (agents' `mcp`).
  ["mcp/"],
  ["metering/"],
  // Traces: a turn's spans (GenAI conventions), OTLP's protobuf, the batching exporter.
  ["telemetry/"],
  ["app-options.ts"],
  ["contracts/"],
  ["session/"],
  ["http/"],
  ["liveline.ts"],
  ["index.ts"],
  // Opt-in, above the product: liveline/simulator (the stand-in, its object, the provider that
  // reaches it and the extension an app adds: it may use the product's types).
  ["simulator/"],
];

/** What the product's entry (src/index.ts) must never reach: the opt-in entries' rooms. */
const OPT_IN = ["simulator/", "testing/"];
/** Measurement arms live in scripts/measurement, beside the measurement Worker: not in src/. */
const MEASUREMENT = "measurement/";

function layerOf(file) {
  const rel = relative(SRC, file);
  let best = null;
  LAYERS.forEach((prefixes, layer) => {
    for (const p of prefixes) {
      if ((rel === p || rel.startsWith(p)) && (best === null || p.length > best.len)) {
        best = { layer, len: p.length };
      }
    }
  });
  if (best === null) throw new Error(`check-imports: ${rel} belongs to no layer; add it to LAYERS`);
  return best.layer;
}

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+)"|import\(\s*"(\.[^"]+)"\s*\)/g;

const graph = new Map();
const problems = [];
for (const file of sources(SRC)) {
  if (relative(SRC, file).startsWith(MEASUREMENT)) {
    problems.push(
      `${relative(ROOT, file)} is a measurement arm in src/: it lives in scripts/measurement`,
    );
    continue;
  }
  const text = readFileSync(file, "utf8");
  const deps = new Set();
  for (const m of text.matchAll(IMPORT)) {
    deps.add(resolve(dirname(file), (m[1] ?? m[2]).replace(/\.js$/, ".ts")));
  }
  graph.set(
    file,
    [...deps].filter((d) => d.startsWith(SRC)),
  );
}

for (const [file, deps] of graph) {
  for (const dep of deps) {
    if (!graph.has(dep))
      problems.push(`${relative(ROOT, file)} imports a missing ${relative(ROOT, dep)}`);
    else if (layerOf(dep) > layerOf(file)) {
      problems.push(`upward import: ${relative(ROOT, file)} -> ${relative(ROOT, dep)}`);
    }
  }
}

// The client library runs in browsers and apps: from outside src/client it takes types only
// (a value import would pull server code, zod included, into every app's bundle).
const VALUE_IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+"(\.\.\/[^"]+)"/g;
for (const file of graph.keys()) {
  if (!relative(SRC, file).startsWith("client/")) continue;
  for (const m of readFileSync(file, "utf8").matchAll(VALUE_IMPORT)) {
    if (relative(SRC, resolve(dirname(file), m[1])).startsWith("client/")) continue;
    problems.push(`${relative(ROOT, file)} imports a value from outside the client: ${m[1]}`);
  }
}

// Cycles: strongly connected components of more than one module (Tarjan).
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
function visit(v) {
  index.set(v, counter);
  low.set(v, counter);
  counter++;
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!graph.has(w)) continue;
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(relative(ROOT, w));
    } while (w !== v);
    if (component.length > 1) problems.push(`cycle: ${component.sort().join(" <-> ")}`);
  }
}
for (const v of graph.keys()) if (!index.has(v)) visit(v);

// The examples are apps: they reach liveline through its public API ("liveline") only.
const EXAMPLES = join(ROOT, "examples");
const ANY_IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g;
let exampleFiles = 0;
for (const app of statSync(EXAMPLES, { throwIfNoEntry: false }) ? readdirSync(EXAMPLES) : []) {
  const appRoot = join(EXAMPLES, app);
  for (const file of sources(appRoot)) {
    exampleFiles++;
    for (const m of readFileSync(file, "utf8").matchAll(ANY_IMPORT)) {
      const spec = m[1] ?? m[2];
      if (spec.startsWith(".") && !resolve(dirname(file), spec).startsWith(appRoot))
        problems.push(`${relative(ROOT, file)} reaches outside its app: ${spec} (use "liveline")`);
      if (/^liveline\/(src|dist)\b/.test(spec))
        problems.push(`${relative(ROOT, file)} imports liveline's internals: ${spec}`);
    }
  }
}

// The product's import closure: from src/index.ts, breadth first (type imports included: a
// declaration file must not name the stand-in either), each module with the path that reached it.
const ENTRY = join(SRC, "index.ts");
let productModules = 0;
if (graph.has(ENTRY)) {
  const via = new Map([[ENTRY, null]]);
  const queue = [ENTRY];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const dep of graph.get(file) ?? [])
      if (graph.has(dep) && !via.has(dep)) {
        via.set(dep, file);
        queue.push(dep);
      }
  }
  productModules = via.size;
  for (const file of via.keys()) {
    const rel = relative(SRC, file);
    if (!OPT_IN.some((room) => rel.startsWith(room))) continue;
    const path = [];
    for (let at = file; at !== null; at = via.get(at)) path.unshift(relative(SRC, at));
    problems.push(`the product entry reaches an opt-in module: ${path.join(" -> ")}`);
  }
}

// Base names: one name per concept. Two files may share one only as the same role.
const byName = new Map();
for (const file of graph.keys()) {
  const name = basename(file);
  byName.set(name, [...(byName.get(name) ?? []), relative(SRC, file)]);
}
for (const [name, files] of byName) {
  if (files.length < 2 || name === "index.ts") continue;
  const kinds = new Set(files.map((f) => dirname(dirname(f))));
  const depthOk = files.every((f) => dirname(f) !== "." && dirname(dirname(f)) !== ".");
  if (kinds.size !== 1 || !depthOk)
    problems.push(`base name ${name} is shared by ${files.join(", ")} (not siblings of one kind)`);
}

const edges = [...graph.values()].reduce((n, d) => n + d.length, 0);
if (problems.length > 0) {
  for (const p of problems) console.error(p);
  console.error(`check-imports: ${problems.length} problem(s) in ${graph.size} modules`);
  process.exit(1);
}
console.log(
  `check-imports: ${graph.size} modules, ${edges} imports, no cycle, no upward import; the product entry reaches ${productModules} modules, none of ${OPT_IN.join(", ")}; ${exampleFiles} example files use the public API only`,
);
