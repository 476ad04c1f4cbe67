/**
 * liveline as a library: run the gateway inside your own Worker with your own agents.
 *
 *   import { createLiveline, defineAgent, defineTool } from "liveline";
 *   const liveline = createLiveline({ agents: { support } });
 *   export default { fetch: liveline.fetch };
 *   export const { SessionObject, GeminiSimulatorObject } = liveline;
 */
export type { LivelineOptions } from "./app.js";
export type { SettingDefaults } from "./config.js";
export type { Env as LivelineBindings } from "./env.js";
export { createLiveline, type Liveline } from "./liveline.js";
export type { ProviderName } from "./providers/registry.js";
export {
  type Agent,
  type AgentDefinition,
  defineAgent,
  defineTool,
  SESSION_OPTIONS,
  type SessionInfo,
  type SessionOptionName,
  type SessionOptions,
  type ToolContext,
  type ToolDefinition,
} from "./tools/define.js";
export type { ToolPayload } from "./vocabulary/events.js";
