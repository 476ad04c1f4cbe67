import { readdirSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";

/**
 * The project's shared `wrangler dev` once it answers /health: `{ base, ws, port, state }`, as
 * its global setup provides it (the scripts project's test/support/scripts-gateway-setup.mjs, the
 * browser project's test/end-to-end/browser-gateway-setup.mjs). Neither setup waits for the
 * start (vitest runs the global setups one after another before any test): a file that comes
 * early waits for it here.
 */
export async function sharedGateway(timeoutMs = 150_000) {
  const gateway = inject("gateway");
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${gateway.base}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return gateway;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) {
      const logs = readdirSync(gateway.state).filter((f) => f.endsWith(".log"));
      throw new Error(
        `the project's shared wrangler dev did not answer /health within ${timeoutMs / 1000} s; see ${logs.map((f) => join(gateway.state, f)).join(", ")}`,
      );
    }
    await new Promise((ok) => setTimeout(ok, 250));
  }
}
