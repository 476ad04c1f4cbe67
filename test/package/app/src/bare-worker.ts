/**
 * The same app's shape without the simulator: the product alone (`liveline`, no
 * `liveline/simulator`), as a gateway that only ever talks to real models deploys it. Its
 * bundle carries none of the stand-in; its wrangler.bare.toml binds SESSION only.
 */
import { createLiveline, defineAgent } from "liveline";

const desk = defineAgent({ instructions: "You answer questions about plans.", tools: [] });

const liveline = createLiveline({ agents: { desk } });

export default { fetch: liveline.fetch };
export const { SessionObject } = liveline;
