import { describe, expect, it } from "vitest";
import { capabilityOverrides, geminiCompression } from "../../src/providers/gemini/provider.js";
import { fetchableUrl } from "../../src/providers/websocket.js";
import { simulatorKnobs } from "../../src/simulator/simulated-provider.js";

describe("provider settings", () => {
  it("GEMINI_CAPABILITIES overrides parts of the capability record, and bad values are named", () => {
    expect(capabilityOverrides(undefined)).toEqual({});
    expect(capabilityOverrides('{"silentHonoured":false}')).toEqual({ silentHonoured: false });
    expect(() => capabilityOverrides("{not json")).toThrow(
      "GEMINI_CAPABILITIES must be a JSON object",
    );
    expect(() => capabilityOverrides('{"silentHonored":false}')).toThrow(/GEMINI_CAPABILITIES/);
  });

  it("context compression is on by default (a sliding window at the service's defaults)", () => {
    expect(geminiCompression(undefined)).toEqual({});
    expect(geminiCompression("")).toEqual({});
    expect(geminiCompression("100000")).toEqual({ triggerTokens: 100_000 });
    expect(geminiCompression("off")).toBeUndefined();
    expect(() => geminiCompression("10k")).toThrow(/GEMINI_COMPRESSION_TRIGGER_TOKENS/);
  });

  it("simulator knobs: the session's metadata.simulator over SIMULATOR_KNOBS", () => {
    const knobs = simulatorKnobs("timeScale=0&race=0.5", { simulator: { race: 1, seed: 7 } });
    expect(Object.fromEntries(knobs)).toEqual({ timeScale: "0", race: "1", seed: "7" });
    expect(Object.fromEntries(simulatorKnobs(undefined, { simulator: "emptyRate=0.3" }))).toEqual({
      emptyRate: "0.3",
    });
  });

  it("opens ws(s) endpoints through fetch with http(s) URLs, as workerd requires", () => {
    expect(fetchableUrl("wss://generativelanguage.googleapis.com/ws/x?key=k")).toBe(
      "https://generativelanguage.googleapis.com/ws/x?key=k",
    );
    expect(fetchableUrl("ws://127.0.0.1:9/m")).toBe("http://127.0.0.1:9/m");
    expect(fetchableUrl("https://example.com/m")).toBe("https://example.com/m");
  });
});

describe("the simulator's public route", () => {
  it("is open on a local host or with SIMULATOR_ROUTE=on, closed on a deployment's host", async () => {
    const { simulatorRouteOpen } = await import("../../src/liveline.js");
    const { livelineApp } = await import("../../src/app-options.js");
    const app = livelineApp({ agents: { none: { instructions: "", tools: [] } } });
    const env = (route?: string) =>
      ({ SIMULATOR_ROUTE: route }) as unknown as Parameters<typeof simulatorRouteOpen>[1];
    expect(simulatorRouteOpen(app, env(), new URL("http://localhost:8787/simulator/gemini"))).toBe(
      true,
    );
    expect(
      simulatorRouteOpen(
        app,
        env(),
        new URL("https://liveline.example.workers.dev/simulator/gemini"),
      ),
    ).toBe(false);
    expect(
      simulatorRouteOpen(
        app,
        env("on"),
        new URL("https://liveline.example.workers.dev/simulator/gemini"),
      ),
    ).toBe(true);
  });
});
