// A SIP call's line (session/sip-call.ts) with a stand-in host: the sideband's playback
// signals decide when the agent's hang-up or transfer happens (only once its line has played
// out; never when the caller spoke over it), its keys go by the keypad rules, and a session
// that ends by any other door hangs the call up.
import { describe, expect, it } from "vitest";
import type { EndReason } from "../../src/metering/closing-record.js";
import { SipCall, type SipCallHost } from "../../src/session/sip-call.js";
import type { DirectCallService } from "../../src/vocabulary/provider-adapter.js";

const tick = () => new Promise((r) => setTimeout(r, 0));

function sipCall() {
  const said: string[] = [];
  const ended: EndReason[] = [];
  const control: string[] = [];
  const calls: DirectCallService = {
    attach: () => Promise.reject(new Error("no socket here")),
    refer: async (id, uri) => {
      control.push(`refer ${id} ${uri}`);
      return { ok: true };
    },
    hangUp: async (id) => {
      control.push(`hangup ${id}`);
    },
  };
  const background: Promise<unknown>[] = [];
  const host: SipCallHost = {
    say: (text) => said.push(text),
    toolResult: () => undefined,
    appConnected: () => false,
    end: (reason) => {
      ended.push(reason);
      call.ending(reason);
    },
    keypadMode: () => "said",
    control: () => calls,
    background: (work) => background.push(work),
    warn: () => undefined,
  };
  const call = new SipCall(
    { service: "openai", callId: "rtc_1", from: "+1555", to: "+1666" },
    host,
  );
  return { call, said, ended, control, settle: () => Promise.all(background) };
}

describe("a SIP call's line", () => {
  it("hangs up once the goodbye has played out, not before", async () => {
    const { call, ended, control, settle } = sipCall();
    call.line.phoneCall.end();
    call.signals([{ kind: "playing" }]);
    call.turnEnded();
    await tick();
    expect(ended).toEqual([]);
    call.signals([{ kind: "played_out" }]);
    await settle();
    expect(ended).toEqual(["agent_hung_up"]);
    expect(control).toEqual(["hangup rtc_1"]);
  });

  it("transfers with a REFER to tel: once the line has played out; no hang-up after it", async () => {
    const { call, ended, control, settle } = sipCall();
    call.line.phoneCall.transfer("+15550003000");
    call.signals([{ kind: "playing" }]);
    call.turnEnded();
    call.signals([{ kind: "played_out" }]);
    await tick();
    await settle();
    expect(control).toEqual(["refer rtc_1 tel:+15550003000"]);
    expect(ended).toEqual(["transferred"]);
  });

  it("control: a line the caller spoke over (cleared) is not acted on, and the model is told", async () => {
    const { call, said, ended, control } = sipCall();
    call.line.phoneCall.transfer("+15550003000");
    call.signals([{ kind: "playing" }]);
    call.turnEnded();
    call.signals([{ kind: "cut" }]);
    await tick();
    expect(control).toEqual([]);
    expect(ended).toEqual([]);
    expect(said).toEqual([
      "(the caller spoke over your line: the transfer to +15550003000 was not made)",
    ]);
  });

  it("a reply with no audio playing leaves at once; keys are one entry at #", async () => {
    const { call, said, ended } = sipCall();
    for (const digit of ["7", "3", "#"]) call.signals([{ kind: "key", digit }]);
    expect(said).toEqual(["(keys 73 pressed on the phone)"]);
    call.line.phoneCall.end();
    call.turnEnded();
    await tick();
    expect(ended).toEqual(["agent_hung_up"]);
  });

  it("a session ended by another door hangs the call up; one the caller left, or moved, does not", async () => {
    for (const [reason, expected] of [
      ["deleted", ["hangup rtc_1"]],
      ["limit", ["hangup rtc_1"]],
      ["caller_hung_up", []],
      ["transferred", []],
    ] as const) {
      const { call, control, settle } = sipCall();
      call.ending(reason);
      await settle();
      expect(control, reason).toEqual(expected);
    }
  });
});
