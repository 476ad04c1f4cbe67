/** The Gemini Live simulator: a deterministic, seeded model stand-in on the real wire. */

export {
  createSimulator,
  handleSession,
  type ResumeContext,
  type SimEffect,
  type SimInput,
  type SimState,
  type SimStepResult,
  schedulingOf,
  simStep,
} from "./gemini/machine.js";
export {
  DEFAULT_KNOBS,
  KnobError,
  parseCallScript,
  parseKnobs,
  type SimulatorKnobs,
} from "./knobs.js";
export { GeminiSimulatorObject, handleSimulatorRequest, type SimulatorEnv } from "./object.js";
export { SIMULATOR_PATH, simulatorUrl } from "./route.js";
