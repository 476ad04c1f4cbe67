/**
 * The carriers a phone call can come through, by the name in its routes
 * (/v1/telephony/<name>/…). Adding one: a folder in src/telephony whose carrier.ts exports a
 * `Carrier` (src/telephony/carrier-contract.ts), and its line below; its vars join the
 * Worker's configuration, and the door's routes and the session's call handling take it.
 */
import type { z } from "zod";
import {
  type CarrierCall,
  type RegisteredCarrier,
  registeredCarrier,
} from "./telephony/carrier-contract.js";
import { plivoCarrier } from "./telephony/plivo/carrier.js";
import { telnyxCarrier } from "./telephony/telnyx/carrier.js";
import { twilioCarrier } from "./telephony/twilio/carrier.js";
import { vonageCarrier } from "./telephony/vonage/carrier.js";

export const CARRIERS = {
  twilio: registeredCarrier(twilioCarrier),
  telnyx: registeredCarrier(telnyxCarrier),
  plivo: registeredCarrier(plivoCarrier),
  vonage: registeredCarrier(vonageCarrier),
} satisfies Record<string, RegisteredCarrier>;

export type CarrierName = keyof typeof CARRIERS;

/** Every carrier's var schema, for src/worker-config.ts to compose. */
export const CARRIER_VARS: z.ZodRawShape = Object.assign(
  {},
  ...Object.values(CARRIERS).map((c) => c.vars.shape),
);

/** The carrier of this name, or null (a route's `:carrier`, a stream's attachment). */
export function carrierNamed(name: string): RegisteredCarrier | null {
  return Object.hasOwn(CARRIERS, name) ? CARRIERS[name as CarrierName] : null;
}

/** A session's phone call (its `metadata.telephony`, read by its carrier), or null. */
export function phoneCallOf(env: object, metadata: Record<string, unknown>): CarrierCall | null {
  const telephony = metadata.telephony;
  if (typeof telephony !== "object" || telephony === null || !("carrier" in telephony)) return null;
  const carrier = typeof telephony.carrier === "string" ? carrierNamed(telephony.carrier) : null;
  return carrier?.callOf(env, telephony) ?? null;
}
