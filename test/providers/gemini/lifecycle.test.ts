/**
 * Gemini Live models as the sources say they live (issue 52): the default is a current one,
 * every row names its source, and a model past its shutdown date is named from the day after
 * it (a month: from the next month's first day), never before.
 */
import { describe, expect, it } from "vitest";
import { capabilitiesFor, modelFamily } from "../../../src/providers/gemini/capabilities.js";
import { geminiConnection } from "../../../src/providers/gemini/endpoint.js";
import {
  CURRENT_GEMINI_LIVE_MODEL,
  GEMINI_LIVE_MODELS,
  lifecycleOf,
  shutdownWarning,
} from "../../../src/providers/gemini/lifecycle.js";

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

describe("Gemini Live models' lifecycle", () => {
  it("the default model is a current, stable one the capability table knows", () => {
    const { model } = geminiConnection({ endpoint: "developer", apiKey: "k" });
    expect(model).toBe(CURRENT_GEMINI_LIVE_MODEL);
    expect(lifecycleOf(model)).toMatchObject({ status: "stable" });
    expect(lifecycleOf(model)?.shutdown).toBeUndefined();
    expect(modelFamily(model)).toBe("gemini-3.8-live");
    expect(capabilitiesFor(model, "developer").nonBlockingCalls).toBe(true);
    // Vertex's default is its GA Live model, which no source retires.
    const vertex = geminiConnection({
      endpoint: "vertex",
      vertexProject: "p",
      vertexAccessToken: "t",
    });
    expect(lifecycleOf(vertex.model)).toMatchObject({ status: "stable" });
  });

  it("every row names its source; every model past or near its end names a replacement", () => {
    for (const row of GEMINI_LIVE_MODELS) {
      expect(row.source.length, row.model).toBeGreaterThan(10);
      if (row.shutdown !== undefined)
        expect(lifecycleOf(row.replacement ?? "")?.status).toBe("stable");
    }
  });

  it("the retired default is named, with its replacement, from the month after October 2026", () => {
    const old = "gemini-2.5-flash-native-audio-preview-09-2025";
    expect(shutdownWarning(old, day("2026-10-31"))).toBeNull();
    const warning = shutdownWarning(`models/${old}`, day("2026-11-01"));
    expect(warning).toContain(old);
    expect(warning).toContain("python-genai #2117");
    expect(warning).toContain(`use ${CURRENT_GEMINI_LIVE_MODEL}`);
    // A day: from the next one.
    expect(shutdownWarning("gemini-2.0-flash-live-001", day("2025-12-09"))).toBeNull();
    expect(shutdownWarning("gemini-2.0-flash-live-001", day("2025-12-10"))).not.toBeNull();
    // Current and unknown models are not judged.
    expect(shutdownWarning(CURRENT_GEMINI_LIVE_MODEL, day("2030-01-01"))).toBeNull();
    expect(shutdownWarning("gemini-9-live-experimental", day("2030-01-01"))).toBeNull();
  });
});
