import { describe, expect, it } from "vitest";
import { parseKnobs } from "../../src/simulator/knobs.js";
import { simulatorUrl } from "../../src/simulator/route.js";

const SERVICE = "/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent";
const at = (path: string) => simulatorUrl(new URL(`http://127.0.0.1:8787${path}`));

describe("simulator routes", () => {
  it("keeps /simulator/gemini and its knobs as they are", () => {
    const url = at("/simulator/gemini?seed=7&timeScale=0&session=s1");
    expect(url?.pathname).toBe("/simulator/gemini");
    expect(Object.fromEntries(url!.searchParams)).toEqual({
      seed: "7",
      timeScale: "0",
      session: "s1",
    });
  });

  it("takes the service path as the SDK builds it, for every API version and method", () => {
    // A bare-origin baseUrl: the SDK joins "http://host/" and "/ws/…".
    for (const path of [
      `/${SERVICE}?key=abc`,
      `${SERVICE}?key=abc`,
      "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=abc",
      "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained?access_token=auth_tokens/x",
      `/simulator/gemini${SERVICE}?key=abc`,
      `/simulator/gemini/${SERVICE}?key=abc`,
    ]) {
      const url = at(path);
      expect(url?.pathname, path).toBe("/simulator/gemini");
      expect(url!.search, path).toBe("");
    }
  });

  it("reads knobs from the base URL's path segment, the query adding to them", () => {
    const url = at(
      `/simulator/gemini/seed=7&timeScale=0&calls=greeting:;set_preference,lookup_faq&race=1${SERVICE}?key=k&race=0.5`,
    );
    expect(url?.pathname).toBe("/simulator/gemini");
    const knobs = parseKnobs(url!.searchParams);
    expect(knobs).toMatchObject({ seed: 7, timeScale: 0, race: 0.5 });
    expect(knobs.calls).toEqual({
      byTurn: { 1: [], 2: ["set_preference", "lookup_faq"] },
      otherwise: [],
    });
    expect(url!.searchParams.has("key")).toBe(false);
  });

  it("decodes percent-encoded knobs in the path segment", () => {
    const url = at(`/simulator/gemini/calls=greeting%3Alookup_faq%3B*%3Aset_preference${SERVICE}`);
    expect(parseKnobs(url!.searchParams).calls).toEqual({
      byTurn: { 1: ["lookup_faq"] },
      otherwise: ["set_preference"],
    });
  });

  it("never passes the SDK's credentials on as knobs", () => {
    const url = at(`/${SERVICE}?key=secret&access_token=t&seed=3`);
    expect([...url!.searchParams.keys()]).toEqual(["seed"]);
    expect(at("/simulator/gemini?key=secret")!.search).toBe("");
  });

  it("leaves other paths alone", () => {
    for (const path of [
      "/",
      "/health",
      "/simulator",
      "/simulator/gemini/",
      "/simulator/gemini/seed=1",
      "/v1/sessions",
      "/ws/google.ai.generativelanguage.v2.GenerativeService.BidiGenerateContent",
      "/ws/google.cloud.aiplatform.v1.LlmBidiService/BidiGenerateContent",
      `/elsewhere${SERVICE}`,
      `/simulator/gemini/a/b${SERVICE}`,
      `${SERVICE}/x`,
    ]) {
      expect(at(path), path).toBeNull();
    }
  });
});
