/** liveline/client: the client side of exactly-once (see client.ts). */
export { type ConnectOptions, connect, LivelineClient } from "./client.js";
export type {
  ClientStatus,
  ClientTool,
  ConnectionError,
  DurableFrame,
  EphemeralFrame,
  ReadyFrame,
  SessionEvent,
  ToolProgressFrame,
} from "./events.js";
