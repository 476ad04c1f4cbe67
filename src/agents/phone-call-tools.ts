/**
 * Tools an agent that answers the phone may have.
 * - `end_call`: the agent hangs up — after the goodbye it says as the tool's follow-up has
 *   played to the caller (learned from the carrier's marks), the call's session ends.
 * - `transfer_call`: the agent passes the caller to one of the app's destinations (named, so
 *   the model can only pick among numbers the app chose, never dial one it made up) — after
 *   its "I am putting you through" has played, through the carrier's API.
 */
import { z } from "zod";
import { E164 } from "../telephony/phone-number.js";
import { defineTool, type ToolContext, type ToolDefinition } from "./define.js";

function phoneCall(ctx: ToolContext) {
  if (ctx.phoneCall === null) throw new Error("this session is not a phone call");
  return ctx.phoneCall;
}

export const endCallTool = defineTool({
  name: "end_call",
  description:
    "End the phone call, when the caller is done or asks to hang up. Say a short goodbye after calling it.",
  args: z.object({}),
  runOn: "server",
  followUp: "speak",
  run: async (_args, ctx) => {
    phoneCall(ctx).end();
    return { ending: "after your goodbye has been heard" };
  },
});

/**
 * `transfer_call` to one of `destinations` (name → E.164 number, e.g.
 * `{ front_desk: "+15550100" }`): the model picks a destination by name.
 */
export function transferCallTool(destinations: Readonly<Record<string, string>>): ToolDefinition {
  const names = Object.keys(destinations);
  const [first, ...rest] = names;
  if (first === undefined) throw new Error("transferCallTool: no destination");
  for (const [name, number] of Object.entries(destinations))
    if (!E164.test(number))
      throw new Error(
        `transferCallTool: ${name} is ${JSON.stringify(number)}, not an E.164 number`,
      );
  return defineTool({
    name: "transfer_call",
    description: `Transfer the phone call to a person, when the caller asks for one or you cannot help. Destinations: ${names.join(", ")}. Tell the caller you are putting them through after calling it.`,
    args: z.object({ to: z.enum([first, ...rest]).describe("the destination") }),
    runOn: "server",
    followUp: "speak",
    run: async ({ to }, ctx) => {
      phoneCall(ctx).transfer(destinations[to] ?? "");
      return { transferring: `to ${to}, once the caller has heard you` };
    },
  });
}
