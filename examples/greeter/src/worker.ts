/**
 * The greeter app: liveline in a Worker of its own, with two agents. This is all an app
 * needs; the repository's wrangler.toml serves it for `npm run dev`.
 */
import { createLiveline } from "liveline";
import { billing, greeter, phoneNumbers } from "./agent.js";

// The first agent is the default; the greeter may hand callers to billing and back, and
// billing answers its own phone number.
const liveline = createLiveline({ agents: { greeter, billing }, phoneNumbers });

export default { fetch: liveline.fetch };
export const { SessionObject, GeminiSimulatorObject } = liveline;
