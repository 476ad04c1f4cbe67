/** The provider contract (test/providers/contract-suite.ts) on xai's wire. */
import { providerContract } from "../contract-suite.js";

// OpenAI's family at xAI: its own session shape, no truncation, an audible answer bundled
// with its calls in one response (livekit/agents issue 6411).
providerContract({
  name: "xai",
  knobs: { wire: "xai" },
  handoff: "in place",
  turnless: false,
  skips: {
    "a speak result answered while the model still speaks is spoken once, in that turn":
      "an xAI response ends at its function call (the OpenAI family): no result can arrive mid-speech",
  },
});
