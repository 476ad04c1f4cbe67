/**
 * One ES module for the demo page's call view (examples/greeter/public/liveline-phone.js,
 * built by scripts/build-assets.mjs): the carrier stand-ins, so that the page's calls go
 * through the same wire as the tests' (Twilio's, or Telnyx's, Plivo's, Vonage's), and the
 * phone line's codecs and resampler, so that the page speaks and hears the line's audio with
 * liveline's own. Simulator code: it stays out
 * of liveline/client, whose bundle every app ships.
 */

export { mulawToPcm16, pcm16ToMulaw } from "../../audio/g711.js";
export { lineToPcm } from "../../audio/line-audio.js";
export { createResampler } from "../../audio/resample.js";
export { PlivoCallStandIn } from "../plivo/index.js";
export { TelnyxCallStandIn } from "../telnyx/index.js";
export { VonageCallStandIn } from "../vonage/index.js";
export { CallSetupError, TwilioCallStandIn, webTransport } from "./index.js";
