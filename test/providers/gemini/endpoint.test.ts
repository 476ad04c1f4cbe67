import { describe, expect, it } from "vitest";
import { GeminiLiveAdapter } from "../../../src/providers/gemini/adapter.js";
import { capabilitiesFor } from "../../../src/providers/gemini/capabilities.js";
import { encodeSetup } from "../../../src/providers/gemini/encode.js";
import { geminiConnection, geminiEndpointProblem } from "../../../src/providers/gemini/endpoint.js";

describe("Developer API vs Vertex AI", () => {
  it("Developer API: the key in ?key=, the v1beta GenerativeService URL, a bare model id", () => {
    const c = geminiConnection({ endpoint: "developer", apiKey: "k1" });
    expect(c.url).toBe(
      "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=k1",
    );
    expect(c.headers).toEqual({});
    // A current model by default (src/providers/gemini/lifecycle.ts).
    expect(encodeSetup({ model: c.model }).setup.model).toBe("models/gemini-3.8-live");
  });

  it("Vertex: the LlmBidiService URL of the location, the token in a header, a resource-path model", () => {
    const c = geminiConnection({
      endpoint: "vertex",
      vertexProject: "acme",
      vertexLocation: "europe-west4",
      vertexAccessToken: "ya29.tok",
      model: "gemini-live-2.5-flash-native-audio",
    });
    expect(c.url).toBe(
      "wss://europe-west4-aiplatform.googleapis.com/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent",
    );
    expect(c.url).not.toContain("ya29");
    expect(c.headers).toEqual({ Authorization: "Bearer ya29.tok" });
    expect(c.model).toBe(
      "projects/acme/locations/europe-west4/publishers/google/models/gemini-live-2.5-flash-native-audio",
    );
    // As the recorded Vertex sessions name it, kept as is in the setup.
    expect(encodeSetup({ model: c.model }).setup.model).toBe(c.model);
  });

  it("Vertex gets no scheduling, no NON_BLOCKING and no audioStreamEnd", () => {
    const c = geminiConnection({ endpoint: "vertex", vertexProject: "p", vertexAccessToken: "t" });
    const caps = capabilitiesFor(c.model, c.endpointLabel);
    expect(caps).toMatchObject({ nonBlockingCalls: false, resultScheduling: false });
    const adapter = new GeminiLiveAdapter({ model: c.model, endpoint: c.endpointLabel });
    expect(adapter.encode({ type: "audio_end" })).toEqual([]);
    const [frame] = adapter.encode({
      type: "tool_responses",
      responses: [{ callId: "a", name: "f", result: {}, scheduling: "silent" }],
    });
    expect(frame).not.toContain("scheduling");
  });

  it("says what is missing, by name, never by value", () => {
    expect(geminiEndpointProblem({ endpoint: "developer" })).toMatch(/GEMINI_API_KEY/);
    expect(geminiEndpointProblem({ endpoint: "vertex" })).toBe(
      "Gemini on Vertex AI needs the VERTEX_ACCESS_TOKEN secret and VERTEX_PROJECT",
    );
    expect(
      geminiEndpointProblem({
        endpoint: "vertex",
        vertexAccessToken: "t",
        model: "projects/p/locations/l/publishers/google/models/m",
      }),
    ).toBeNull();
  });
});
