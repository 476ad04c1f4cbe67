import type { AgentName } from "../config.js";
import type { AgentDefinition } from "./define.js";
import { greeter } from "./greeter.js";

/** Every agent a session can be created for (config.ts lists their names for validation). */
export const AGENTS: Record<AgentName, AgentDefinition> = { greeter };
