/**
 * MEASUREMENT ONLY — never deployed. The greeter app with the naive relay (liveline with
 * every protection off) as a second arm, so that `npm run repro` and the workers tests show
 * each field failure in the naive arm and its absence in liveline, on one Worker. Served
 * with the repository's wrangler.toml in place of its `main` (`startServer({ main })` in
 * scripts/lib/harness.mjs; vitest.config.ts for the workers tests). The greeter itself, and
 * every gateway built on `createLiveline` alone, carries none of the arm.
 */
import { createLiveline } from "liveline";
import { billing, greeter, phoneNumbers } from "../../examples/greeter/src/agent.js";
import { naiveRelay } from "../../src/measurement/naive-relay.js";

const liveline = createLiveline({ agents: { greeter, billing }, phoneNumbers, naiveRelay });

export default { fetch: liveline.fetch };
export const { SessionObject, GeminiSimulatorObject } = liveline;
