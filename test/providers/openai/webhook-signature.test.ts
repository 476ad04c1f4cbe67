/**
 * OpenAI's webhook signatures (Standard Webhooks): liveline's check and the SIP stand-in's
 * signer, each written from the scheme, both held against the official SDK's own check
 * (`openai` 7.57.0, `webhooks.unwrap`): what the SDK accepts liveline accepts, and each
 * forgery both refuse.
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  WEBHOOK_TOLERANCE_S,
  webhookKey,
  webhookRefusal,
} from "../../../src/providers/openai/webhook-signature.js";
import { signedDelivery } from "../../../src/simulator/openai-sip/webhook-sender.js";

const SECRET = "whsec_dGVzdC1vcGVuYWktd2ViaG9vay1zZWNyZXQ=";
const OTHER = "whsec_b3RoZXItcHJvamVjdHMtc2VjcmV0";
const event = {
  object: "event",
  id: "evt_1",
  type: "realtime.call.incoming",
  created_at: 1_750_287_018,
  data: { call_id: "rtc_1", sip_headers: [{ name: "To", value: "sip:+15550100@x" }] },
};
const sdk = new OpenAI({ apiKey: "sk-test", webhookSecret: SECRET });
const now = Date.now();

/** Whether the SDK takes the delivery, and whether liveline does (null: accepted). */
async function verdicts(headers: Record<string, string>, body: string, at = now) {
  const ours = await webhookRefusal(SECRET, new Headers(headers), body, at);
  const theirs = await sdk.webhooks.unwrap(body, headers).then(
    () => true,
    () => false,
  );
  return { ours, theirs };
}

describe("webhook signatures, against the official SDK", () => {
  it("a delivery the stand-in signs is taken by the SDK and by liveline", async () => {
    const { headers, body } = await signedDelivery(SECRET, event, now, "wh_1");
    expect(await verdicts(headers, body)).toEqual({ ours: null, theirs: true });
  });

  it("one valid signature among several (a secret being rotated) is enough; other versions are skipped", async () => {
    const { headers, body } = await signedDelivery(SECRET, event, now, "wh_2");
    const rotated = {
      ...headers,
      "webhook-signature": `v1,Zm9yZ2Vk v2,abc ${headers["webhook-signature"]}`,
    };
    expect(await verdicts(rotated, body)).toEqual({ ours: null, theirs: true });
  });

  it("forgeries are refused by both: another secret, an altered body, another id, stale or future, no v1", async () => {
    const good = await signedDelivery(SECRET, event, now, "wh_3");
    const other = await signedDelivery(OTHER, event, now, "wh_3");
    const stale = await signedDelivery(
      SECRET,
      event,
      now - (WEBHOOK_TOLERANCE_S + 60) * 1000,
      "wh_3",
    );
    const future = await signedDelivery(
      SECRET,
      event,
      now + (WEBHOOK_TOLERANCE_S + 60) * 1000,
      "wh_3",
    );
    const forged: [string, Record<string, string>, string, string][] = [
      ["another secret", other.headers, other.body, "bad_signature"],
      ["an altered body", good.headers, good.body.replace("rtc_1", "rtc_2"), "bad_signature"],
      ["another id", { ...good.headers, "webhook-id": "wh_4" }, good.body, "bad_signature"],
      ["stale", stale.headers, stale.body, "stale"],
      ["from the future", future.headers, future.body, "stale"],
      [
        "no v1 signature",
        {
          ...good.headers,
          "webhook-signature": good.headers["webhook-signature"]!.replace("v1,", "v2,"),
        },
        good.body,
        "bad_signature",
      ],
    ];
    for (const [name, headers, body, why] of forged)
      expect(await verdicts(headers, body), name).toEqual({ ours: why, theirs: false });
    const { "webhook-timestamp": _t, ...noTimestamp } = good.headers;
    expect(await webhookRefusal(SECRET, new Headers(noTimestamp), good.body, now)).toBe(
      "missing_headers",
    );
  });

  it("a secret is whsec_ and base64, or taken as its own bytes as the SDK takes it", async () => {
    expect(new TextDecoder().decode(webhookKey(SECRET)!)).toBe("test-openai-webhook-secret");
    // A bad whsec_ secret is a setting to fix (named at /health).
    for (const bad of ["", "whsec_", "whsec_not base64!"]) expect(webhookKey(bad), bad).toBeNull();
    const raw = "a-secret-without-its-prefix";
    const { headers, body } = await signedDelivery(raw, event, now, "wh_5");
    const rawSdk = new OpenAI({ apiKey: "sk-test", webhookSecret: raw });
    expect(await webhookRefusal(raw, new Headers(headers), body, now)).toBeNull();
    await expect(rawSdk.webhooks.unwrap(body, headers)).resolves.toBeDefined();
  });
});
