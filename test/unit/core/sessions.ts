/** Small helpers shared by the core's scenario tests. */
import { Harness } from "./harness.js";

/** A session with one client connected and a live model connection. */
export function live(overrides: ConstructorParameters<typeof Harness>[0] = {}): Harness {
  const h = new Harness(overrides);
  h.connect("phone");
  h.model({ type: "setup_complete" });
  return h;
}

export const types = (h: Harness, client = "phone") => h.durableFrames(client).map((f) => f.type);
export const texts = (h: Harness, client = "phone") =>
  h.durableFrames(client).flatMap((f) => (f.type === "text" ? [f.text] : []));
export const turnEnds = (h: Harness) =>
  h.durableFrames("phone").filter((f) => f.type === "turn_complete" || f.type === "interrupted");
/** The user turns the clients saw: id, how it came in, what it said. */
export const userTurns = (h: Harness) =>
  h.durableFrames("phone").flatMap((f) => (f.type === "user" ? [[f.turnId, f.text]] : []));
