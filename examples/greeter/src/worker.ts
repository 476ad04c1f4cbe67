/**
 * The greeter app: liveline in a Worker of its own, with three agents. This is all an app
 * needs; the repository's wrangler.toml serves it for `npm run dev`, with the simulator standing in
 * for the model until a key is set (its one line: `extensions: [simulator]`).
 */
import { createLiveline } from "liveline";
import { simulator } from "liveline/simulator";
import { billing, greeter, orders, phoneNumbers } from "./agent.js";

// The first agent is the default; the greeter may hand callers to billing and back, and
// billing answers its own phone number. The order desk's tools are an MCP server's.
const liveline = createLiveline({
  agents: { greeter, billing, orders },
  phoneNumbers,
  extensions: [simulator],
});

export default { fetch: liveline.fetch };
export const { SessionObject, GeminiSimulatorObject } = liveline;
