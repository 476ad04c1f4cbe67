// A call's line (session/phone-call-line.ts) with a stand-in host: it leaves (hangs up or
// transfers) only once the caller heard the agent's line through; a line the caller spoke
// over, a hang-up or the session's end cancels that; a tool reads the latest typed entry.
// Transfers go over HTTP to the carrier stand-in's REST API (served on localhost).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveWeb } from "../../scripts/lib/web-server.mjs";
import { CARRIERS } from "../../src/carrier-registry.js";
import { type CallLineHost, PhoneCallLine } from "../../src/session/phone-call-line.js";
import { TwilioCallApiStandIn } from "../../src/simulator/twilio/call-api-stand-in.js";
import type { KeypadMode } from "../../src/telephony/keypad.js";

const ACCOUNT = `AC${"2".repeat(32)}`;
const CALL = `CA${"3".repeat(32)}`;
const TOKEN = "line-test-auth-token";

let api: TwilioCallApiStandIn;
let server: { url: string; close(): Promise<void> };
/** Every request the REST API got (the stand-in refuses them all: no call is registered). */
const requests: string[] = [];

beforeAll(async () => {
  api = new TwilioCallApiStandIn({ accountSid: ACCOUNT, authToken: TOKEN });
  server = await serveWeb(async (request: Request) => {
    requests.push(new URL(request.url).pathname);
    return api.handle(request);
  });
});
afterAll(async () => {
  await server.close();
});

function line(opts: { demo?: boolean; keypad?: KeypadMode } = {}) {
  const said: string[] = [];
  let ended = 0;
  let drained = true;
  const host: CallLineHost = {
    say: (text) => said.push(text),
    end: () => {
      ended++;
    },
    drained: () => drained,
    keypadMode: () => opts.keypad ?? "tools",
  };
  const call = {
    carrier: "twilio" as const,
    callSid: CALL,
    accountSid: ACCOUNT,
    from: "+15550001111",
    to: "+15550002222",
    ...(opts.demo === true ? { demo: true as const } : {}),
  };
  const vars = { TWILIO_AUTH_TOKEN: TOKEN, TWILIO_API_BASE_URL: server.url };
  const carrierCall = CARRIERS.twilio.callOf(vars, call);
  if (carrierCall === null) throw new Error("not a Twilio call");
  const callLine = new PhoneCallLine(carrierCall, host);
  return {
    callLine,
    said,
    ended: () => ended,
    setDrained: (d: boolean) => {
      drained = d;
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 150));
/** Waits until `done` holds (a request's answer on a loaded machine takes its time), or 5 s. */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done() && waited < 5000; waited += 25)
    await new Promise((r) => setTimeout(r, 25));
}

describe("leaving the call after the agent's line", () => {
  it("a transfer is asked of the carrier once the line was heard through, not before", async () => {
    const { callLine, said } = line();
    const before = requests.length;
    callLine.phoneCall.transfer("+15550003000");
    callLine.drained(); // the turn has not ended: its line is still being said
    await settle();
    expect(requests.length).toBe(before);
    callLine.turnEnded();
    callLine.drained();
    await until(() => said.length > 0);
    expect(requests.length).toBe(before + 1);
    // The stand-in knows no such call: the model hears why, the call goes on.
    expect(said.at(-1)).toMatch(/^\(the transfer to \+15550003000 failed: .*404.*\)$/);
  });

  it("a line the caller spoke over does not transfer or hang up; the model is told", async () => {
    for (const leave of ["transfer", "end"] as const) {
      const { callLine, said, ended } = line();
      const before = requests.length;
      if (leave === "transfer") callLine.phoneCall.transfer("+15550003000");
      else callLine.phoneCall.end();
      callLine.turnEnded();
      callLine.cut(); // the caller spoke over its tail: cleared
      callLine.drained(); // the clear's echoed marks
      await settle();
      expect(requests.length).toBe(before);
      expect(ended()).toBe(0);
      expect(said).toEqual([
        leave === "transfer"
          ? "(the caller spoke over your line: the transfer to +15550003000 was not made)"
          : "(the caller spoke over your goodbye: the call goes on)",
      ]);
    }
  });

  it("the session's end (a hang-up, a dropped stream) cancels a pending transfer", async () => {
    const { callLine, said } = line();
    const before = requests.length;
    callLine.phoneCall.transfer("+15550003000");
    callLine.turnEnded();
    callLine.dispose();
    callLine.drained();
    await settle();
    expect(requests.length).toBe(before);
    expect(said).toEqual([]);
  });

  it("an agent's hang-up also asks a carrier with a REST hang-up to end the call, once heard", async () => {
    const said: string[] = [];
    let ended = 0;
    const host: CallLineHost = {
      say: (text) => said.push(text),
      end: () => {
        ended++;
      },
      drained: () => true,
      keypadMode: () => "said",
    };
    const uuid = "2a6e5e08-4d8f-4f5a-9c3a-0b7f6a9e2d11";
    const call = { carrier: "plivo", callUuid: uuid, from: "+15550001111", to: "+15550002222" };
    const vars = {
      PLIVO_AUTH_ID: "MA00000000000000TEST",
      PLIVO_AUTH_TOKEN: "line-test-plivo-token",
      PLIVO_API_BASE_URL: server.url,
    };
    const plivoCall = CARRIERS.plivo.callOf(vars, call);
    if (plivoCall === null) throw new Error("not a Plivo call");
    const callLine = new PhoneCallLine(plivoCall, host);
    const before = requests.length;
    callLine.phoneCall.end();
    callLine.drained(); // the goodbye's turn has not ended: nothing yet
    await settle();
    expect([ended, requests.length]).toEqual([0, before]);
    callLine.turnEnded();
    callLine.drained();
    await until(() => requests.length > before);
    expect(ended).toBe(1);
    expect(requests.slice(before)).toEqual([`/v1/Account/MA00000000000000TEST/Call/${uuid}/`]);
    // Twilio has none: its stream's close ends the call (the other tests' requests are transfers).
    expect(
      CARRIERS.twilio.callOf({}, { ...call, carrier: "twilio", callSid: CALL })?.end,
    ).toBeUndefined();
  });

  it("a demo page's call cannot be transferred", () => {
    const { callLine } = line({ demo: true });
    expect(() => callLine.phoneCall.transfer("+15550003000")).toThrow(/demo/);
    expect(() => callLine.phoneCall.transfer("555")).toThrow(/E\.164/);
  });
});

describe("the keypad's entries", () => {
  it("a tool reads the latest entry (a retyped number replaces the first), once", async () => {
    const { callLine, said } = line();
    for (const key of ["1", "1", "#", "2", "2", "#"]) callLine.pressed(key);
    expect(said).toEqual([
      "(the caller typed 2 keys on the phone; a tool can read them)",
      "(the caller typed 2 keys on the phone; a tool can read them)",
    ]);
    expect(callLine.phoneCall.takeKeys()).toBe("22");
    expect(callLine.phoneCall.takeKeys()).toBeNull();
  });

  it("said: the keys are the line; no tool gets them", () => {
    const { callLine, said } = line({ keypad: "said" });
    for (const key of ["4", "2", "#"]) callLine.pressed(key);
    expect(said).toEqual(["(keys 42 pressed on the phone)"]);
    expect(callLine.phoneCall.takeKeys()).toBeNull();
  });
});
