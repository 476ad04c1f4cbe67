/**
 * The NCCOs liveline answers Vonage with ("NCCO reference",
 * https://developer.vonage.com/en/voice/voice-api/ncco-reference): a `connect` to a
 * `websocket` endpoint with `content-type` audio/l16;rate=16000 (the call's audio, both ways,
 * at the rate the protocol's clients speak) and `headers`, which Vonage puts at the top level
 * of the socket's first message: the stream's token and the call's uuid. After the connect,
 * nothing: the call ends when the socket closes.
 */
import { requireE164 } from "../phone-number.js";
import { VONAGE_CONTENT_TYPE } from "./stream-messages.js";

export type Ncco = Array<Record<string, unknown>>;

export function connectStreamNcco(streamUrl: string, token: string, callUuid: string): Ncco {
  return [
    {
      action: "connect",
      endpoint: [
        {
          type: "websocket",
          uri: streamUrl,
          "content-type": VONAGE_CONTENT_TYPE,
          headers: { token, call: callUuid },
        },
      ],
    },
  ];
}

/** A call its session cannot take: told so, then ended (no action follows). */
export function refuseNcco(): Ncco {
  return [{ action: "talk", text: "Sorry, this call cannot be taken now. Goodbye." }];
}

/** Connects the caller to `number` (E.164; Vonage's numbers come without the +). */
export function dialNcco(number: string, from: string): Ncco {
  requireE164(number);
  return [
    {
      action: "connect",
      ...(/^\+\d{6,15}$/.test(from) ? { from: from.slice(1) } : {}),
      endpoint: [{ type: "phone", number: number.slice(1) }],
    },
  ];
}
