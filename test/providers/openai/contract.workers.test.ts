/** The provider contract (test/providers/contract-suite.ts) on openai's wire. */
import { providerContract } from "../contract-suite.js";

// A response ends at its function call; nothing goes on without response.create.
providerContract({
  name: "openai",
  knobs: { wire: "openai" },
  handoff: "in place",
  turnless: false,
  skips: {
    "a speak result answered while the model still speaks is spoken once, in that turn":
      "an OpenAI response ends at its function call: no result can arrive mid-speech",
  },
});
