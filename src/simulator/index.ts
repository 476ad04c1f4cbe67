/**
 * liveline/simulator: the model stand-in, opt-in. `simulator` is the extension an app adds
 * (`createLiveline({ agents, extensions: [simulator] })`): the `simulator` provider, its
 * Durable Object (`GeminiSimulatorObject`, bound as GEMINI_SIMULATOR) and its public faces.
 * The rest is the stand-in itself: a deterministic, seeded model on each real wire.
 */

export { simulator } from "./extension.js";
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
export {
  type SimulatedWireArm,
  simulatorKnobs,
  simulatorKnobsProblem,
  simulatorProvider,
} from "./simulated-provider.js";
