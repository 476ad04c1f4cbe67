/**
 * node scripts/build-assets.mjs — bundles liveline/client and its browser helpers into one
 * ES module the demo page loads (examples/greeter/public/liveline-client.js, not committed).
 * Run by wrangler's [build] step, by `npm run dev` and before the tests.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
await build({
  entryPoints: [join(ROOT, "src/client/browser/bundle.ts")],
  outfile: join(ROOT, "examples/greeter/public/liveline-client.js"),
  bundle: true,
  format: "esm",
  target: "es2022",
  sourcemap: "inline",
  logLevel: "warning",
});
