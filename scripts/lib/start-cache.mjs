/**
 * What every `wrangler dev` of a run would otherwise make again, made once and kept: the
 * Worker's bundle (`wrangler deploy --dry-run`) and the usage database's state after its
 * migrations. Each is 4 to 6 CPU-seconds of a wrangler process, more than half of a start,
 * and npm test starts dozens of gateways on two cores.
 *
 * An entry is named by a digest of everything it is made from: the repository's sources
 * (src/, scripts/, examples/, migrations/, the root's config files and lockfile) and
 * wrangler's version, with the config and the Worker's main. A change to any of them makes a
 * new entry; entries older than a day are removed. An app outside the repository (its own
 * sources) is never cached. LIVELINE_START_CACHE=off makes everything afresh.
 */
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";

const CACHE = join(tmpdir(), "liveline-start-cache");
const SOURCES = ["src", "scripts", "examples", "migrations"];
const NOT_SOURCES = new Set(["node_modules", ".wrangler", "dist", "bench-results"]);
const DAY_MS = 24 * 3600 * 1000;
// Written last into a finished entry, before it is renamed into place.
const DONE = ".done";

/** Whether `config` and `cwd` are the repository's own (its sources are what the digest reads). */
export function cacheable(root, config, cwd) {
  if (process.env.LIVELINE_START_CACHE === "off") return false;
  const inside = (path) => !relative(root, path).startsWith("..");
  return inside(config) && (cwd === undefined || inside(cwd));
}

const digests = new Map();

/** One digest of the repository's sources (read once per process). */
function sourcesDigest(root) {
  const known = digests.get(root);
  if (known !== undefined) return known;
  const hash = createHash("sha256");
  const add = (path) => {
    hash.update(relative(root, path).split(sep).join("/"));
    hash.update("\0");
    hash.update(readFileSync(path));
    hash.update("\0");
  };
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      if (NOT_SOURCES.has(name)) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else add(path);
    }
  };
  for (const dir of SOURCES) if (existsSync(join(root, dir))) walk(join(root, dir));
  for (const name of readdirSync(root).sort())
    if (/\.(json|toml)$/.test(name) && statSync(join(root, name)).isFile()) add(join(root, name));
  add(join(root, "node_modules/wrangler/package.json"));
  const digest = hash.digest("hex");
  digests.set(root, digest);
  return digest;
}

/** The entry's name: the sources' digest with what else it is made from. */
export function entryKey(root, ...parts) {
  return createHash("sha256")
    .update([sourcesDigest(root), ...parts].join("\0"))
    .digest("hex")
    .slice(0, 24);
}

/** Entries (and unfinished ones) older than a day. */
function sweep() {
  for (const name of readdirSync(CACHE)) {
    const path = join(CACHE, name);
    try {
      if (Date.now() - statSync(path).mtimeMs > DAY_MS)
        rmSync(path, { recursive: true, force: true });
    } catch {
      // another process removed it
    }
  }
}

/**
 * The entry `kind-key`, made by `make(dir)` when it is missing. Made in a directory of its
 * own and renamed into place when finished, so two processes making it at once both end with
 * a whole entry (the second's is dropped).
 */
export async function cached(kind, key, make) {
  const entry = join(CACHE, `${kind}-${key}`);
  if (existsSync(join(entry, DONE))) {
    // Used: a day from now before it is swept.
    const now = new Date();
    utimesSync(entry, now, now);
    return entry;
  }
  mkdirSync(CACHE, { recursive: true });
  sweep();
  const building = mkdtempSync(join(CACHE, `building-${kind}-`));
  try {
    await make(building);
    writeFileSync(join(building, DONE), "");
    try {
      renameSync(building, entry);
    } catch {
      // Made by another process meanwhile: theirs stands.
      rmSync(building, { recursive: true, force: true });
    }
  } catch (err) {
    rmSync(building, { recursive: true, force: true });
    throw err;
  }
  return entry;
}

/** Copies an entry's files (not its mark) into `dir`. */
export function copyEntry(entry, dir) {
  cpSync(entry, dir, { recursive: true, filter: (path) => !path.endsWith(`${sep}${DONE}`) });
}
