/** A service's refusal of a direct call (a device's WebRTC offer), in its own words. */
import { redact, refusalReason } from "./websocket.js";

/**
 * The service did not create the call: its HTTP status (0: it was not reached) and its
 * words, with every credential of the request blanked out.
 */
export class DirectCallRefused extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {
    super(
      status === 0
        ? `the model service could not be reached: ${reason}`
        : `the model service refused the call (HTTP ${status}${reason ? `: ${reason}` : ""})`,
    );
    this.name = "DirectCallRefused";
  }

  /** The service refused the offer itself (a malformed SDP): the device's doing, not ours. */
  get offerRefused(): boolean {
    return this.status === 400 || this.status === 422;
  }
}

/** The refusal a failed creation answer says, its words cut short and `secrets` blanked. */
export async function refusalOf(res: Response, secrets: readonly string[]) {
  return new DirectCallRefused(res.status, redact(await refusalReason(res), secrets));
}
