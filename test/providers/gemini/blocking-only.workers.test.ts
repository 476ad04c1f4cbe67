/**
 * Models that take only blocking calls (issue 50): the blocking-only contract
 * (test/providers/contract-suite.ts) on each.
 */
import { type BlockingOnlyModel, blockingOnlyContract } from "../contract-suite.js";

const BLOCKING_ONLY: BlockingOnlyModel[] = [
  { name: "gemini 3.1 (sync-only)", knobs: { wire: "gemini", syncOnly: 1, callsLast: 1 } },
  {
    name: "gemini 3.1 on Vertex AI",
    knobs: { wire: "gemini", syncOnly: 1, endpoint: "vertex", callsLast: 1 },
  },
  {
    // The 2.5 record on Vertex: every call BLOCKING, and the model waits for results (race 0).
    name: "gemini 2.5 on Vertex AI (every call BLOCKING)",
    knobs: { wire: "gemini", endpoint: "vertex", race: 0, callsLast: 1 },
    controlSkip:
      "the old rule took an end after silent results for an empty reply only where the record says turn_complete waits for results; 2.5's does not",
  },
];

for (const model of BLOCKING_ONLY) blockingOnlyContract(model);
