/** The provider contract (test/providers/contract-suite.ts) on azure's wire. */
import { providerContract } from "../contract-suite.js";

// OpenAI's family at Azure Voice Live: the original event names and flat session.
providerContract({
  name: "azure",
  knobs: { wire: "azure" },
  handoff: "in place",
  turnless: false,
  skips: {
    "a speak result answered while the model still speaks is spoken once, in that turn":
      "a Voice Live response ends at its function call (the OpenAI family): no result can arrive mid-speech",
  },
});
