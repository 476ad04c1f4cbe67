/**
 * The habit of relays written for OpenAI Realtime (the naive relay's, and the official
 * agents SDKs' tool loop): every spoken call output is followed by its own `response.create`,
 * whatever other calls of the session are still open. The control of "two questions in one
 * breath": on GPT-Live's one chain the request sent after the first of two parallel outputs is
 * refused (`function_call_outputs_required`), where liveline's session-wide gate asks once.
 */

import { PerResponseGate } from "../../../src/measurement/per-response-gate.js";
import type { ToolResponse } from "../../../src/vocabulary/model.js";

export class PerOutputGate extends PerResponseGate {
  override outputs(responses: readonly ToolResponse[], turnId: string | undefined) {
    const goOn = responses.some((r) => r.scheduling !== "silent");
    if (goOn) this.ask(turnId);
    return { send: [...responses], goOn };
  }
}
