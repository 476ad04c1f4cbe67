import { bodyLimit } from "hono/body-limit";
import { HttpError } from "./errors.js";

/**
 * A route's body limit, checked as the body streams in (a huge upload is cut off, not read
 * whole first): beyond `maxSize` bytes, 413 `payload_too_large`.
 */
export function limitBody(maxSize: number) {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new HttpError(413, "payload_too_large", `bodies are limited to ${maxSize} bytes`);
    },
  });
}
