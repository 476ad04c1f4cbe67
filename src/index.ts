/**
 * liveline as a library: run the gateway inside your own Worker with your own agents. This is
 * the product: the real providers, nothing of the simulator, a measurement arm or
 * liveline/testing (npm run check:imports checks its import closure).
 *
 *   import { createLiveline, defineAgent, defineTool } from "liveline";
 *   const liveline = createLiveline({ agents: { support } });
 *   export default { fetch: liveline.fetch };
 *   export const { SessionObject } = liveline;
 *
 * The model simulator is opt-in: `extensions: [simulator]` (from "liveline/simulator"), and
 * `GeminiSimulatorObject` exported beside `SessionObject`.
 */

export {
  type Agent,
  type AgentDefinition,
  defineAgent,
  defineTool,
  type PhoneCall,
  SESSION_OPTIONS,
  type SessionInfo,
  type SessionLimitOptions,
  type SessionOptionName,
  type SessionOptions,
  type ToolContext,
  type ToolDefinition,
} from "./agents/define.js";
export { endCallTool, transferCallTool } from "./agents/phone-call-tools.js";
export type { LivelineExtension, LivelineOptions } from "./app-options.js";
export type { SessionResource } from "./contracts/session-api.js";
export type { Env as LivelineBindings } from "./contracts/worker-env.js";
export { createLiveline, type Liveline } from "./liveline.js";
export type { Cost } from "./metering/cost.js";
export type { ModelPrice, PriceOverrides } from "./metering/prices.js";
export type { ProviderName } from "./provider-registry.js";
export type { ToolPayload } from "./vocabulary/log-events.js";
export type { SettingDefaults } from "./worker-config.js";
