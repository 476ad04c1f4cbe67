import { describe, expect, it } from "vitest";
import { liveSessionId, simulatorUrl } from "../../../src/simulator/route.js";

const at = (path: string) => simulatorUrl(new URL(`http://127.0.0.1:8787${path}`));

describe("the GPT-Live face's routes", () => {
  it("takes the service's path, knobs in the query, credentials dropped", () => {
    const url = at("/v1/live/sessions?seed=7&timeScale=0&key=k");
    expect(url?.pathname).toBe("/v1/live/sessions");
    expect(Object.fromEntries(url!.searchParams)).toEqual({ seed: "7", timeScale: "0" });
  });

  it("sends a sideband to the object its session id names", () => {
    const id = liveSessionId("s-1_x", 3);
    const url = at(`/v1/live/sessions/${id}/attach`);
    expect(url?.pathname).toBe(`/v1/live/sessions/${id}/attach`);
    expect(url?.searchParams.get("session")).toBe("s-1_x");
    expect(at("/v1/live/sessions/sess_real_openai_id/attach")).toBeNull();
    expect(at("/v1/live/sessions/x/y")).toBeNull();
  });
});
