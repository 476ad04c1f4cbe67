/**
 * What each Gemini Live model family and endpoint can do, so the tool policy degrades to
 * the next line of defence (suppression of unsolicited generations) where a marker is
 * missing. Sources: test/fixtures/PROTOCOL_NOTES.md "Function behavior / scheduling";
 * test/fixtures/gemini/field-observations.md O2, O6, O9.
 */
import type { ModelCapabilities } from "../../vocabulary/model.js";
import type { GeminiTextRoute } from "./encode.js";

/** Developer API endpoint (the API key goes in `?key=`, see `geminiUrl`). */
export const DEFAULT_GEMINI_LIVE_URL =
  "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent";

interface FamilyRow {
  /** Matched against the bare model id (no "models/" or Vertex path). */
  pattern: RegExp;
  family: string;
  caps: ModelCapabilities;
  /** How user text and nudges travel (see `GeminiTextRoute`). */
  textRoute: GeminiTextRoute;
}

/**
 * First match wins. `silentHonoured` is false for every family: a SILENT result was seen to
 * make a 2.5 model repeat its utterance (O2, placement inside `response`; whether the proto
 * placement fixes it is open), no recording shows it honoured, and it is false wherever
 * scheduling is absent. A record claims only what a recording or the service's contract shows.
 */
const FAMILIES: readonly FamilyRow[] = [
  {
    // Synchronous only; no turnComplete until every call is answered (O6: ADK issue 5407);
    // clientContent only as the initial history, text as realtimeInput.text (livekit PR 5251).
    pattern: /^gemini-3\.1-.*live/,
    family: "gemini-3.1-flash-live",
    caps: {
      nonBlockingCalls: false,
      resultScheduling: false,
      turnCompleteWaitsForResults: true,
      silentHonoured: false,
      responsesOnRequest: false,
    },
    textRoute: "realtime_input",
  },
  {
    // NON_BLOCKING by default, scheduling supported (ai.google.dev models/gemini-3.8-live).
    // Text route: assumed as 3.1's (the 3.x line; realtimeInput.text is taken by every family).
    // SILENT honoured: assumed false until a recording shows otherwise.
    pattern: /^gemini-3\.8-.*live|^gemini-3\.8-live/,
    family: "gemini-3.8-live",
    caps: {
      nonBlockingCalls: true,
      resultScheduling: true,
      turnCompleteWaitsForResults: false,
      silentHonoured: false,
      responsesOnRequest: false,
    },
    textRoute: "realtime_input",
  },
  {
    // NON_BLOCKING + scheduling (Live API tool-use docs); SILENT seen ignored (O2).
    pattern: /^gemini-2\.5-flash(-[a-z0-9]+)*-native-audio|^gemini-live-2\.5-flash-native-audio/,
    family: "gemini-2.5-flash-native-audio",
    caps: {
      nonBlockingCalls: true,
      resultScheduling: true,
      turnCompleteWaitsForResults: false,
      silentHonoured: false,
      responsesOnRequest: false,
    },
    textRoute: "client_content",
  },
  {
    // Half-cascade 2.5 flash live: turnComplete follows a toolCall without waiting for the
    // result (O1: ADK issue 4902). SILENT: documented, but no recording shows it honoured and
    // the 2.5 line was seen ignoring it (O2), so assumed not honoured: silent results are
    // withheld, and nothing can make the model say its reply again. An app that has seen it
    // honoured may claim it (GEMINI_CAPABILITIES, docs/KNOWN-LIMITS.md says what that risks).
    pattern: /^gemini-2\.5-flash-live|^gemini-live-2\.5-flash/,
    family: "gemini-2.5-flash-live",
    caps: {
      nonBlockingCalls: true,
      resultScheduling: true,
      turnCompleteWaitsForResults: false,
      silentHonoured: false,
      responsesOnRequest: false,
    },
    textRoute: "client_content",
  },
];

/**
 * Unknown models: assume no NON_BLOCKING and no scheduling (the markers may be silently
 * ignored), and that turnComplete may wait for results, so the core never holds a call
 * back until turnComplete (the 3.1 deadlock). Text as realtimeInput.text, which every
 * family takes, where clientContent after the seed may be refused.
 */
const CONSERVATIVE: ModelCapabilities = {
  nonBlockingCalls: false,
  resultScheduling: false,
  turnCompleteWaitsForResults: true,
  silentHonoured: false,
  responsesOnRequest: false,
};

/** The bare model id: "models/x" → "x", "projects/…/publishers/google/models/x" → "x". */
export function bareModelId(model: string): string {
  const slash = model.lastIndexOf("/");
  return slash === -1 ? model : model.slice(slash + 1);
}

/** Vertex is named "vertex" or given by its URL / a Vertex resource path as model. */
export function isVertexEndpoint(endpoint: string, model = ""): boolean {
  return (
    endpoint === "vertex" ||
    endpoint.includes("aiplatform.googleapis.com") ||
    endpoint.includes("LlmBidiService") ||
    model.startsWith("projects/")
  );
}

export function modelFamily(model: string): string {
  const id = bareModelId(model);
  return FAMILIES.find((row) => row.pattern.test(id))?.family ?? "unknown";
}

export function capabilitiesFor(
  model: string,
  endpoint: string,
  overrides?: Partial<ModelCapabilities>,
): ModelCapabilities {
  const id = bareModelId(model);
  const base = FAMILIES.find((row) => row.pattern.test(id))?.caps ?? CONSERVATIVE;
  // Vertex drops `scheduling` (livekit's notes, O9), so SILENT cannot be honoured there; no
  // recording shows it accepting NON_BLOCKING, so every call is declared BLOCKING there.
  const endpointAdjusted: ModelCapabilities = isVertexEndpoint(endpoint, model)
    ? { ...base, nonBlockingCalls: false, resultScheduling: false, silentHonoured: false }
    : { ...base };
  return { ...endpointAdjusted, ...overrides };
}

/** How user text reaches this model (unknown models: realtimeInput.text, taken by all). */
export function textRouteFor(model: string): GeminiTextRoute {
  const id = bareModelId(model);
  return FAMILIES.find((row) => row.pattern.test(id))?.textRoute ?? "realtime_input";
}

/** The connect URL with the API key as `?key=`. Log `redactGeminiUrl(url)`, never the url. */
export function geminiUrl(base: string, apiKey: string): string {
  const url = new URL(base);
  url.searchParams.set("key", apiKey);
  return url.toString();
}

/** For logs and errors: the same URL with any key or access token replaced. */
export function redactGeminiUrl(url: string): string {
  const parsed = new URL(url);
  for (const name of ["key", "access_token"]) {
    if (parsed.searchParams.has(name)) parsed.searchParams.set(name, "REDACTED");
  }
  return parsed.toString();
}
