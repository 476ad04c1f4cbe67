import type { ResumeContext } from "./gemini/machine.js";

/** The RPC surface of a simulator object, as other objects (and the env's types) see it. */
export interface SimulatorApi {
  /** A resumption context saved by a connection of this session, or null. */
  loadHandle(handle: string): Promise<ResumeContext | null>;
}
