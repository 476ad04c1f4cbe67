/**
 * One ES module for the demo page's call view (examples/greeter/public/liveline-phone.js,
 * built by scripts/build-assets.mjs): the carrier stand-in, so that the page's calls go
 * through the same Twilio wire as the tests', and the phone line's codec and resampler, so
 * that the page speaks and hears μ-law 8 kHz with liveline's own. Simulator code: it stays out
 * of liveline/client, whose bundle every app ships.
 */

export { mulawToPcm16, pcm16ToMulaw } from "../../telephony/audio/g711.js";
export { createResampler } from "../../telephony/audio/resample.js";
export { CallSetupError, TwilioCallStandIn, webTransport } from "./index.js";
