import { describe, expect, it } from "vitest";
import {
  bareModelId,
  capabilitiesFor,
  DEFAULT_GEMINI_LIVE_URL,
  geminiUrl,
  modelFamily,
  redactGeminiUrl,
  textRouteFor,
} from "../../../src/providers/gemini/capabilities.js";

const DEV = DEFAULT_GEMINI_LIVE_URL;
const VERTEX =
  "wss://us-central1-aiplatform.googleapis.com/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent";

describe("capabilitiesFor", () => {
  it.each([
    ["gemini-2.5-flash-native-audio-preview-12-2025", false],
    ["models/gemini-2.5-flash-native-audio-preview-09-2025", false],
    ["gemini-live-2.5-flash-preview", false],
    ["gemini-2.5-flash-live-preview", false],
  ])(
    "2.5 live / native audio on the Developer API: non-blocking + scheduling, SILENT not claimed (%s)",
    (model, silent) => {
      expect(capabilitiesFor(model, DEV)).toEqual({
        nonBlockingCalls: true,
        resultScheduling: true,
        turnCompleteWaitsForResults: false,
        silentHonoured: silent,
        responsesOnRequest: false,
      });
    },
  );

  it("3.1 flash live: synchronous only, turnComplete waits for results", () => {
    expect(capabilitiesFor("gemini-3.1-flash-live-preview", DEV)).toEqual({
      nonBlockingCalls: false,
      resultScheduling: false,
      turnCompleteWaitsForResults: true,
      silentHonoured: false,
      responsesOnRequest: false,
    });
    expect(modelFamily("models/gemini-3.1-flash-live-preview")).toBe("gemini-3.1-flash-live");
    expect(modelFamily("gemini-2.5-flash-native-audio-preview-12-2025")).toBe(
      "gemini-2.5-flash-native-audio",
    );
  });

  it("Vertex drops scheduling and NON_BLOCKING, by URL, by name or by resource path", () => {
    // A family with scheduling and NON_BLOCKING on the Developer API: Vertex turns both off, as
    // no recording shows Vertex accepting NON_BLOCKING.
    const model = "gemini-live-2.5-flash-preview";
    expect(capabilitiesFor(model, DEV).resultScheduling).toBe(true);
    const expected = {
      nonBlockingCalls: false,
      resultScheduling: false,
      turnCompleteWaitsForResults: false,
      silentHonoured: false,
      responsesOnRequest: false,
    };
    expect(capabilitiesFor(model, VERTEX)).toEqual(expected);
    expect(capabilitiesFor(model, "vertex")).toEqual(expected);
    expect(capabilitiesFor(`projects/p/locations/l/publishers/google/models/${model}`, "")).toEqual(
      expected,
    );
  });

  it("no record claims SILENT honoured: no recording shows it, a 2.5 model ignored it (O2)", () => {
    for (const model of [
      "gemini-2.5-flash-native-audio-preview-12-2025",
      "gemini-2.5-flash-live-preview",
      "gemini-live-2.5-flash-preview",
      "gemini-3.1-flash-live-preview",
      "gemini-3.8-flash-live-preview",
      "something-else",
    ]) {
      expect(capabilitiesFor(model, DEV).silentHonoured, model).toBe(false);
    }
    // An app that has seen it honoured may claim it.
    expect(
      capabilitiesFor("gemini-2.5-flash-live-preview", DEV, { silentHonoured: true })
        .silentHonoured,
    ).toBe(true);
  });

  it("unknown models are conservative", () => {
    expect(capabilitiesFor("gemini-2.0-flash-live-preview-04-09", DEV)).toEqual({
      nonBlockingCalls: false,
      resultScheduling: false,
      turnCompleteWaitsForResults: true,
      silentHonoured: false,
      responsesOnRequest: false,
    });
    expect(modelFamily("something-else")).toBe("unknown");
  });

  it("3.x families and the text route: 3.1 sync only, 3.8 NON_BLOCKING with scheduling", () => {
    expect(modelFamily("gemini-3.8-flash-live-preview")).toBe("gemini-3.8-live");
    expect(capabilitiesFor("gemini-3.8-flash-live-preview", DEV)).toMatchObject({
      nonBlockingCalls: true,
      resultScheduling: true,
      turnCompleteWaitsForResults: false,
    });
    expect(textRouteFor("gemini-3.1-flash-live-preview")).toBe("realtime_input");
    expect(textRouteFor("models/gemini-3.8-live")).toBe("realtime_input");
    expect(textRouteFor("gemini-2.5-flash-native-audio-preview-12-2025")).toBe("client_content");
    expect(textRouteFor("gemini-live-2.5-flash-preview")).toBe("client_content");
    expect(textRouteFor("something-else")).toBe("realtime_input");
  });

  it("overrides win", () => {
    expect(
      capabilitiesFor("gemini-3.1-flash-live-preview", DEV, { resultScheduling: true }),
    ).toEqual({
      nonBlockingCalls: false,
      resultScheduling: true,
      turnCompleteWaitsForResults: true,
      silentHonoured: false,
      responsesOnRequest: false,
    });
  });

  it("bareModelId strips prefixes", () => {
    expect(bareModelId("projects/p/locations/l/publishers/google/models/x-1")).toBe("x-1");
    expect(bareModelId("models/x-1")).toBe("x-1");
    expect(bareModelId("x-1")).toBe("x-1");
  });
});

describe("URLs", () => {
  it("default is the Developer API BidiGenerateContent endpoint", () => {
    expect(DEFAULT_GEMINI_LIVE_URL).toBe(
      "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent",
    );
  });

  it("geminiUrl appends ?key= (encoded); redact hides it", () => {
    const url = geminiUrl(DEV, "AIza+secret/=");
    expect(url).toBe(`${DEV}?key=AIza%2Bsecret%2F%3D`);
    expect(new URL(url).searchParams.get("key")).toBe("AIza+secret/=");
    expect(redactGeminiUrl(url)).toBe(`${DEV}?key=REDACTED`);
    expect(redactGeminiUrl(url)).not.toContain("secret");
  });
});
