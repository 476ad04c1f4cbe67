// The package mirror this project is developed against serves only the Linux builds of
// packages that ship per-platform binaries, so `npm install` writes a lock file without
// entries for the other platforms, and `npm ci` then refuses it ("Missing: ... from lock
// file"). This adds a stub entry (version, os, cpu, optional) for each such package: npm
// skips a stub on a platform it does not match, and installs the real one elsewhere.
import { readFileSync, writeFileSync } from "node:fs";

const lockPath = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, "utf8"));
const packages = lock.packages;

const platformOf = (name) => {
  const os = /darwin/.test(name)
    ? "darwin"
    : /win32|windows/.test(name)
      ? "win32"
      : /android/.test(name)
        ? "android"
        : /linux/.test(name)
          ? "linux"
          : undefined;
  const cpu = /arm64|aarch64/.test(name) ? "arm64" : /x64|-64$/.test(name) ? "x64" : undefined;
  const libc = /musl/.test(name) ? "musl" : os === "linux" ? "glibc" : undefined;
  return { os, cpu, libc };
};

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path === "" ? "node_modules" : `${path}/node_modules`;
    const candidates = [`${base}/${dep}`, `node_modules/${dep}`];
    if (candidates.some((c) => packages[c])) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (!os || !cpu) continue; // not a per-platform binary package: leave it to npm
    packages[`node_modules/${dep}`] = {
      version,
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc] } : {}),
      optional: true,
      os: [os],
    };
    added++;
  }
}
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-platform-stubs: ${added} stub entr${added === 1 ? "y" : "ies"} added`);
