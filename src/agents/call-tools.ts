/**
 * Tools an agent that answers the phone may have. `end_call`: the agent hangs up — after the
 * goodbye it says as the tool's follow-up has played to the caller (learned from the
 * carrier's marks), the call's session ends and the carrier ends the call.
 */
import { z } from "zod";
import { defineTool } from "./define.js";

export const endCallTool = defineTool({
  name: "end_call",
  description:
    "End the phone call, when the caller is done or asks to hang up. Say a short goodbye after calling it.",
  args: z.object({}),
  runOn: "server",
  followUp: "speak",
  run: async (_args, ctx) => {
    ctx.endCall();
    return { ending: "after your goodbye has been heard" };
  },
});
