import { describe, expect, it } from "vitest";
import { checkOrigin } from "../../src/http/auth.js";
import { HttpError } from "../../src/http/errors.js";
import type { Config } from "../../src/worker-config.js";

const config = { ALLOWED_ORIGINS: ["https://app.example"] } as unknown as Config;
const refused = (origin: string | undefined) => {
  try {
    checkOrigin(config, origin);
    return null;
  } catch (err) {
    return err instanceof HttpError ? `${err.status} ${err.code}` : String(err);
  }
};

describe("checkOrigin (ALLOWED_ORIGINS)", () => {
  it("passes a listed origin in any case, with or without trailing slashes", () => {
    for (const origin of ["https://app.example", "HTTPS://App.Example", "https://app.example//"])
      expect(refused(origin), origin).toBeNull();
  });

  it("refuses anything else with 403: no other normalisation (default port, path, scheme)", () => {
    for (const origin of [
      "null",
      "https://evil.example",
      "https://app.example:443",
      "https://app.example/path",
      "http://app.example",
      "https://app.example.evil.example",
    ])
      expect(refused(origin), origin).toBe("403 forbidden");
  });

  it("passes no Origin, and an empty or blank one as none (else it depended on the hops the request took)", () => {
    for (const origin of [undefined, "", "  "]) expect(refused(origin), `${origin}`).toBeNull();
  });

  it("checks nothing when ALLOWED_ORIGINS is not set", () => {
    expect(() => checkOrigin({} as Config, "https://evil.example")).not.toThrow();
  });
});
