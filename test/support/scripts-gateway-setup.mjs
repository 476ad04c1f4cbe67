/**
 * One `wrangler dev` for the files of the scripts project that can share it (vitest's
 * globalSetup; a test takes it with `await sharedGateway()`, test/support/shared-gateway.mjs):
 * the official SDK clients against the simulator's faces, `npm run try`, the OpenAI bursts,
 * and `npm run repro -- --base` in test/scripts/quick-repro and figures. Each of them started
 * its own before, 15–25 s of a loaded machine each; a file that needs other Worker vars, kills
 * its gateway or restarts it (deploy-restart, restart-without-key, phone-call, tracing, soak,
 * bench, the package) still starts its own.
 *
 * The setup does not wait for the start: vitest runs the projects' global setups one after
 * another before any test, so waiting here would hold the whole run for the start. The port is
 * chosen here and given to the tests at once; `sharedGateway()` waits for /health.
 *
 * The measurement worker (the greeter app with its opt-in arms: repro needs the naive relay),
 * the tests' fixed API key, the simulator's answer tags. The vars are the union of what
 * those files asked for; none of them checks the default in its place (no shared file tests
 * the frame rate's refusal or a phone call without a carrier token).
 */
import { provideGateway } from "./gateway-setup.mjs";

/** test/scripts/try-phone.scripts.test.mjs signs its calls with it. */
export const TWILIO_AUTH_TOKEN = "try-phone-test-token";

export default function setup({ provide }) {
  return provideGateway(provide, "scripts", () => ({
    vars: {
      TWILIO_AUTH_TOKEN,
      // test/end-to-end/openai-bursts.scripts.test.mjs sends lines faster than the default 100/s.
      MAX_FRAMES_PER_SECOND: "1000",
    },
  }));
}
