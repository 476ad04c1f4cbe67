/**
 * MEASUREMENT ONLY — never deployed. The greeter app with the naive relay (liveline with
 * every protection off) as a second arm, so that `npm run repro` and the workers tests show
 * each field failure in the naive arm and its absence in liveline, on one Worker; and a phone
 * line capped at one turn, for the carrier contract's cap. Served with the repository's
 * wrangler.toml in place of its `main` (`startServer({ main })` in scripts/lib/harness.mjs;
 * vitest.config.ts for the workers tests). The greeter itself, and every gateway built on
 * `createLiveline` alone, carries none of this.
 */
import { type AgentDefinition, createLiveline, defineAgent } from "liveline";
import { billing, greeter, phoneNumbers } from "../../examples/greeter/src/agent.js";
import { naiveRelay } from "../../src/measurement/naive-relay.js";
import { CAPPED_LINE } from "./lines.js";

const capped = defineAgent({ ...(greeter as AgentDefinition), limits: { maxTurns: 1 } });

const liveline = createLiveline({
  agents: { greeter, billing, capped },
  phoneNumbers: { ...phoneNumbers, [CAPPED_LINE]: "capped" },
  naiveRelay,
});

export default { fetch: liveline.fetch };
export const { SessionObject, GeminiSimulatorObject } = liveline;
