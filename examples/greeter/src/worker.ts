/**
 * The greeter app: liveline in a Worker of its own, with one agent. This is all an app
 * needs; the repository's wrangler.toml serves it for `npm run dev`.
 */
import { createLiveline } from "liveline";
import { greeter } from "./agent.js";

const liveline = createLiveline({ agents: { greeter } });

export default { fetch: liveline.fetch };
export const { SessionObject, GeminiSimulatorObject } = liveline;
