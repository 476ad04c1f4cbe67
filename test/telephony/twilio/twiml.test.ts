import { describe, expect, it } from "vitest";
import { connectStreamTwiml, hangupTwiml, sayTwiml } from "../../../src/telephony/twilio/twiml.js";

describe("connectStreamTwiml", () => {
  it("answers <Connect><Stream> with its <Parameter>s", () => {
    expect(
      connectStreamTwiml({
        streamUrl: "wss://gw.example/v1/telephony/twilio/stream/s1",
        parameters: { token: "t0k" },
      }),
    ).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Connect>' +
        '<Stream url="wss://gw.example/v1/telephony/twilio/stream/s1">' +
        '<Parameter name="token" value="t0k"/></Stream></Connect></Response>',
    );
  });

  it("escapes &, <, >, \" and ' in every attribute", () => {
    const xml = connectStreamTwiml({
      streamUrl: "wss://gw.example/a&b<c",
      parameters: { 'n"&': `v'<>"&` },
    });
    expect(xml).toContain('url="wss://gw.example/a&amp;b&lt;c"');
    expect(xml).toContain('name="n&quot;&amp;" value="v&apos;&lt;&gt;&quot;&amp;"');
    // Nothing unescaped is left inside the attribute values.
    const values = [...xml.matchAll(/="([^"]*)"/g)].map((m) => m[1]);
    for (const v of values) expect(v).not.toMatch(/[<>'"]|&(?!amp;|lt;|gt;|quot;|apos;)/);
  });

  it("takes no parameters", () => {
    expect(connectStreamTwiml({ streamUrl: "wss://x/s", parameters: {} })).toContain(
      '<Stream url="wss://x/s"></Stream>',
    );
  });
});

describe("refusals", () => {
  it("hangs up, or says something then hangs up", () => {
    expect(hangupTwiml()).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>',
    );
    expect(sayTwiml("Sorry & goodbye <3")).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say>Sorry &amp; goodbye &lt;3</Say><Hangup/></Response>',
    );
  });
});
