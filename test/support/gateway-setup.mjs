import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, MEASUREMENT_WORKER, startServer } from "../../scripts/lib/harness.mjs";

/**
 * A project's shared `wrangler dev` (the measurement worker), for a vitest globalSetup: started
 * in the background on a free port, its address provided as `gateway` at once (tests wait for
 * /health with sharedGateway(), test/support/shared-gateway.mjs: vitest runs the projects'
 * global setups one after another, so waiting here would hold the whole run), and the teardown
 * returned. `options(port)`: startServer's options besides its port, state and main.
 */
export async function provideGateway(provide, name, options) {
  const port = await freePort();
  // Its own state directory, so that its log has a known place (sharedGateway's error names it).
  const state = mkdtempSync(join(tmpdir(), `liveline-${name}-gateway-`));
  const starting = startServer({ port, state, main: MEASUREMENT_WORKER, ...options(port) });
  // A failed start is reported by the tests that wait for it (sharedGateway, with the log).
  starting.catch(() => {});
  const base = `http://127.0.0.1:${port}`;
  provide("gateway", { base, ws: base.replace(/^http/, "ws"), port, state });
  return async () => {
    const server = await starting.catch(() => null);
    await server?.stop();
    if (!process.env.KEEP_WRANGLER_STATE) rmSync(state, { recursive: true, force: true });
  };
}
