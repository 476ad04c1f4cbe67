/**
 * One `wrangler dev` for every file of the browser project (vitest's globalSetup): the
 * measurement worker (the greeter app with its opt-in arms: the naive relay, a recorded
 * line), so that the demo page, the timeline viewer's recordings, `npm run replay` and
 * `npm run check:live` all run against the same gateway, started once.
 *
 * Its real providers' URLs point at its own simulator (each wire's face, paced fast), with
 * placeholder keys: `npm run check:live -- --base …` goes through the gemini, openai and
 * gpt-live adapters as it would with a real key. The demo's sessions stay on the simulator.
 *
 * The setup does not wait for the start (vitest runs the projects' global setups one after
 * another before any test: waiting would hold the whole run for it); a test file takes the
 * gateway with `await sharedGateway()` (test/support/shared-gateway.mjs), which waits for /health.
 */
import { provideGateway } from "../support/gateway-setup.mjs";

/** The call view's webhook is signed by the gateway with its own token. */
export const TWILIO_AUTH_TOKEN = "browser-test-twilio-token";
/** A placeholder in place of a real key: it must never show in a recording. */
export const PLACEHOLDER_KEY = "check-live-placeholder-key";

export default function setup({ provide }) {
  return provideGateway(provide, "browser", (port) => {
    const self = `ws://127.0.0.1:${port}`;
    const knobs = "timeScale=0.02";
    return {
      // The demo as people see it: the simulator's answers without the tests' [#rN] tags
      // (check:live and replay find a reply said twice by its words as well).
      answerTags: false,
      vars: {
        TWILIO_AUTH_TOKEN,
        PROVIDER: "simulator",
        // check:live's rebuild scenario restarts a session's object.
        FAULT_INJECTION: "on",
        // A recording's parts of a second: a session's recording is readable a second behind it.
        RECORDING_PART_MS: "1000",
        GEMINI_API_KEY: PLACEHOLDER_KEY,
        GEMINI_LIVE_URL: `${self}/simulator/gemini?${knobs}`,
        OPENAI_API_KEY: PLACEHOLDER_KEY,
        OPENAI_REALTIME_URL: `${self}/simulator/openai?${knobs}`,
        GPT_LIVE_URL: `${self}/v1/live/sessions?${knobs}`,
      },
    };
  });
}
