/** The provider contract (test/providers/contract-suite.ts) on gpt-live's wire. */
import { providerContract } from "../contract-suite.js";

// No turns: utterances bounded by the transcript timeline; tools delegated to a backend.
providerContract({
  name: "gpt-live",
  knobs: { wire: "gpt-live" },
  handoff: "new connection",
  turnless: true,
  skips: {
    "control: the naive relay duplicates that greeting":
      "no turn ends on GPT-Live, so no late result can make it regenerate a reply: its failure is a call delivered twice, whose control is in test/providers/gpt-live/session.workers.test.ts and npm run repro",
  },
});
