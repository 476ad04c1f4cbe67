/**
 * The two entry points as an app sees them: `liveline` alone hands on the session's object and
 * no simulator, in its values and its types; `extensions: [simulator]` (liveline/simulator)
 * adds the simulator's object and its provider. The types are checked by `npm run typecheck`
 * (the @ts-expect-error lines are the controls: they fail it when the simulator leaks back).
 */
import { describe, expect, expectTypeOf, it, vi } from "vitest";
import { createLiveline, type LivelineBindings } from "../src/index.js";
import { GeminiSimulatorObject, type SimulatorEnv, simulator } from "../src/simulator/index.js";

// The Durable Object base class (the objects are never built here).
vi.mock("cloudflare:workers", () => ({ DurableObject: class {} }));

const agents = { a: { instructions: "", tools: [] } };

describe("liveline and liveline/simulator", () => {
  it("hands on the simulator's object and provider only where the app adds them", () => {
    const bare = createLiveline({ agents });
    // @ts-expect-error: without the simulator's extension there is no simulator object to export.
    expect(bare.GeminiSimulatorObject).toBeUndefined();
    expect(Object.keys(bare).sort()).toEqual(["SessionObject", "fetch"]);
    const added = createLiveline({ agents, extensions: [simulator] });
    expectTypeOf(added.GeminiSimulatorObject).toEqualTypeOf<typeof GeminiSimulatorObject>();
    expect(added.GeminiSimulatorObject).toBe(GeminiSimulatorObject);
  });

  it("refuses an app that offers the simulator without adding it, even where another app of the isolate added it", () => {
    createLiveline({ agents, extensions: [simulator] });
    expect(() => createLiveline({ agents, providers: ["gemini", "simulator"] })).toThrow(
      /"simulator" is not a provider of this app \(add it: extensions: \[simulator\]/,
    );
    // Control: the same list with the extension.
    expect(() =>
      createLiveline({ agents, providers: ["gemini", "simulator"], extensions: [simulator] }),
    ).not.toThrow();
  });

  it("types a Worker's env without the simulator's binding; the simulator's env names it", () => {
    expectTypeOf<LivelineBindings>().not.toHaveProperty("GEMINI_SIMULATOR");
    expectTypeOf<LivelineBindings>().not.toHaveProperty("SIMULATOR_KNOBS");
    expectTypeOf<SimulatorEnv>().toHaveProperty("GEMINI_SIMULATOR");
    // An env of the product alone is a whole LivelineBindings.
    const env = { SESSION: {} } as Pick<LivelineBindings, "SESSION">;
    expectTypeOf(env).toExtend<LivelineBindings>();
  });
});
