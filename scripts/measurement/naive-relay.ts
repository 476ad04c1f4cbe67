/**
 * The naive relay: liveline with every protection off, forwarding what the model says and
 * sending each tool result the moment it is ready, as the frameworks in the field do — a
 * measurement arm, so that `npm run repro` and the tests show the failures side by side
 * (`metadata.naive: true` on a simulator session). Only a Worker that passes it to
 * `createLiveline` (worker.ts here) has it; it lives beside that Worker, outside src/, so the
 * package carries none of it.
 */
import type { RelayArm } from "../../src/app-options.js";
import { NO_GUARDS } from "../../src/core/session-state.js";
import { naiveWire } from "./naive-wire.js";
import { rebuildContextNaive } from "./rebuild-naive.js";

export const naiveRelay: RelayArm = {
  guards: NO_GUARDS,
  // The seed is left as frameworks send it (that is what the arm measures).
  rebuild: rebuildContextNaive,
  wire: naiveWire,
};
