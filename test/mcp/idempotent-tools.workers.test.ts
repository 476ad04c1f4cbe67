/**
 * What a tool says about being run again after a restart of its session's object: its
 * `idempotent` (defineTool, an MCP server's policy), checked when the app starts, carried to
 * the core's policy, and read from an MCP server's definition alone (before it has listed its
 * tools); and the key a call's effect is made once by.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  agentProblems,
  defineTool,
  idempotencyKey,
  type McpServerDefinition,
  toolPolicies,
} from "../../src/agents/define.js";
import { mcpRerunTimeoutMs } from "../../src/mcp/rerun-policy.js";

const tool = (extra: Record<string, unknown>) =>
  defineTool({
    name: "book",
    description: "d",
    args: z.object({}),
    runOn: "server",
    followUp: "speak",
    run: async () => ({}),
    ...extra,
  });

describe("a tool's idempotent", () => {
  it("is carried to the core's policy only when true", () => {
    const agent = {
      instructions: "",
      tools: [tool({ idempotent: true }), { ...tool({}), name: "other" }],
    };
    const policies = toolPolicies(agent, 15_000);
    expect(policies.book?.idempotent).toBe(true);
    expect(policies.other).not.toHaveProperty("idempotent");
  });

  it("is refused on a client tool, or when it is not a boolean", () => {
    expect(agentProblems({ instructions: "", tools: [tool({ idempotent: true })] })).toEqual([]);
    expect(
      agentProblems({ instructions: "", tools: [tool({ idempotent: true, runOn: "client" })] }),
    ).toContainEqual(expect.stringMatching(/only a server tool can be idempotent/));
    expect(
      agentProblems({ instructions: "", tools: [tool({ idempotent: "yes" })] }),
    ).toContainEqual(expect.stringMatching(/idempotent must be true or false/));
    const desk: McpServerDefinition = {
      name: "desk",
      url: "https://mcp.example.com/mcp",
      policy: { idempotent: "yes" as unknown as boolean },
    };
    expect(agentProblems({ instructions: "", tools: [], mcp: [desk] })).toContainEqual(
      expect.stringMatching(/the mcp server "desk": idempotent must be true or false/),
    );
  });

  it("the key is the session's and the call's: the same for the call, another for every other", () => {
    expect(idempotencyKey("s1", "c1")).toBe(idempotencyKey("s1", "c1"));
    expect(idempotencyKey("s1", "c1")).not.toBe(idempotencyKey("s2", "c1"));
    expect(idempotencyKey("s1", "c1")).not.toBe(idempotencyKey("s1", "c2"));
  });
});

describe("an MCP tool's idempotent, read from its server's definition", () => {
  const servers: McpServerDefinition[] = [
    {
      name: "desk",
      url: "https://mcp.example.com/mcp",
      policy: {
        timeoutMs: 8_000,
        tools: { "place.order": { idempotent: true }, lookup: { timeoutMs: 2_000 } },
      },
    },
    { name: "pay", url: "https://pay.example.com/mcp", policy: { idempotent: true } },
  ];

  it("per tool (by the name the model calls it), or for every tool of a server", () => {
    // The server's `place.order` is `desk__place_order` to the model.
    expect(mcpRerunTimeoutMs(servers, "desk__place_order", 15_000)).toBe(8_000);
    expect(mcpRerunTimeoutMs(servers, "desk__lookup", 15_000)).toBeNull();
    expect(mcpRerunTimeoutMs(servers, "pay__charge", 15_000)).toBe(15_000);
    // Not one of these servers' tools.
    expect(mcpRerunTimeoutMs(servers, "lookup_faq", 15_000)).toBeUndefined();
  });
});
