/**
 * The door's route for carriers whose transfer fetches the call's next document (Plivo's
 * aleg_url): signed by the carrier for the exact URL, number included, it answers the
 * carrier's <Dial>; unsigned, 403; for a carrier that needs no such route, 404.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signedPlivoRequest } from "../../src/telephony/plivo/inbound-call.js";
import { BASE } from "../support/gateway.js";

const transferUrl = (carrier: string, to = "+15550100") =>
  `${BASE}/v1/telephony/${carrier}/transfer?to=${encodeURIComponent(to)}`;
const params = () => new URLSearchParams({ CallUUID: "2a6e5e08-4d8f-4f5a-9c3a-0b7f6a9e2d11" });

describe("POST /v1/telephony/:carrier/transfer", () => {
  it("answers Plivo's signed request with a <Dial> of the number", async () => {
    const res = await exports.default.fetch(
      await signedPlivoRequest(transferUrl("plivo"), env.PLIVO_AUTH_TOKEN as string, params()),
    );
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("<Dial><Number>15550100</Number></Dial>");
  });

  it("refuses one not signed by Plivo for that very URL (another number), and a bad number", async () => {
    const signed = await signedPlivoRequest(
      transferUrl("plivo"),
      env.PLIVO_AUTH_TOKEN as string,
      params(),
    );
    const moved = new Request(transferUrl("plivo", "+15550199"), signed);
    expect((await exports.default.fetch(moved)).status).toBe(403);
    const unsigned = new Request(transferUrl("plivo"), {
      method: "POST",
      body: params().toString(),
    });
    expect((await exports.default.fetch(unsigned)).status).toBe(403);
    const bad = await signedPlivoRequest(
      transferUrl("plivo", "555"),
      env.PLIVO_AUTH_TOKEN as string,
      params(),
    );
    expect((await exports.default.fetch(bad)).status).toBe(400);
  });

  it("is no route for a carrier whose transfer needs none", async () => {
    const res = await exports.default.fetch(transferUrl("twilio"), { method: "POST" });
    expect(res.status).toBe(404);
  });
});
