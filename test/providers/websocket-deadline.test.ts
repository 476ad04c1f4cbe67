/**
 * Each model connection attempt is given up by the shell before the core gives up on it: the
 * upgrade's deadline is below the core's connect timer, so that an attempt the core retries
 * is already gone (it held one of the invocation's six connections waiting for headers).
 * An MCP server's requests wait for their headers as long as its longest call may take.
 */
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/core/session-state.js";
import { mcpHeadersDeadlineMs } from "../../src/mcp/server-connection.js";
import { CONNECT_DEADLINE_MS } from "../../src/providers/websocket.js";

describe("deadlines", () => {
  it("a model upgrade's is below the core's connect timer", () => {
    expect(CONNECT_DEADLINE_MS).toBeLessThan(
      defaultConfig({ sessionId: "s", tools: {} }).connectTimeoutMs,
    );
  });

  it("an MCP server's covers its longest call (a plain-JSON answer's headers come with its result)", () => {
    const server = {
      name: "crm",
      url: "https://crm.example/mcp",
      policy: { timeoutMs: 8_000, tools: { report: { timeoutMs: 40_000 }, quick: {} } },
    };
    expect(mcpHeadersDeadlineMs(server, 15_000, 5_000)).toBe(45_000);
    expect(mcpHeadersDeadlineMs({ name: "x", url: "https://x.example" }, 15_000, 5_000)).toBe(
      20_000,
    );
    // Never below the listing's own timeout.
    expect(mcpHeadersDeadlineMs({ name: "x", url: "https://x.example" }, 1_000, 5_000)).toBe(
      10_000,
    );
  });
});
