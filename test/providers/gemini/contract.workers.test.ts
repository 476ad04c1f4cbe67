/** The provider contract (test/providers/contract-suite.ts) on gemini's wire. */
import { providerContract } from "../contract-suite.js";

// The 2.x default: turnComplete right after a toolCall (the race).
providerContract({
  name: "gemini",
  knobs: { wire: "gemini", race: 1 },
  handoff: "new connection",
  turnless: false,
  skips: {},
});
