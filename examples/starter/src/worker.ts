/**
 * Your liveline app: one agent with one tool. The model (the built-in simulator until a key is
 * set) calls `lookup_hours` when asked about opening hours; liveline runs it once and the
 * model says its answer. Add tools with defineTool, agents to createLiveline's `agents`.
 */
import { createLiveline, defineAgent, defineTool } from "liveline";
import { simulator } from "liveline/simulator";
import { z } from "zod";

const WEEK: Record<string, string> = {
  monday: "9:00 to 17:00",
  tuesday: "9:00 to 17:00",
  wednesday: "9:00 to 17:00",
  thursday: "9:00 to 17:00",
  friday: "9:00 to 17:00",
  saturday: "10:00 to 14:00",
  sunday: "closed",
};

const lookupHours = defineTool({
  name: "lookup_hours",
  description: "Look up the shop's opening hours, for one day or the whole week.",
  args: z.object({ day: z.string().optional().describe("a day of the week, if one was asked") }),
  runOn: "server", // "client": the app answers it (tool_call / tool_result frames)
  followUp: "speak", // "silent": a side effect the model must not talk about
  run: async ({ day }) => {
    const asked = Object.keys(WEEK).find((d) => day?.toLowerCase().includes(d));
    return asked === undefined
      ? { answer: "We are open Monday to Friday, 9:00 to 17:00, and Saturday 10:00 to 14:00." }
      : { answer: `On ${asked[0]!.toUpperCase()}${asked.slice(1)} we are ${WEEK[asked]}.` };
  },
});

const assistant = defineAgent({
  instructions:
    "You are the shop's assistant. Greet the user briefly. Answer questions about opening hours with lookup_hours.",
  tools: [lookupHours],
});

// The first agent is the default (POST /v1/sessions {"agent": …} picks another). The simulator
// answers until a model's key is set; without `extensions: [simulator]` (and its binding in
// wrangler.toml) the Worker carries none of it.
const liveline = createLiveline({ agents: { assistant }, extensions: [simulator] });

export default { fetch: liveline.fetch };
export const { SessionObject, GeminiSimulatorObject } = liveline;
