/**
 * MEASUREMENT ONLY — never deployed. The greeter app with the naive relay (liveline with
 * every protection off) as a second arm, so that `npm run repro` and the workers tests show
 * each field failure in the naive arm and its absence in liveline, on one Worker; and a phone
 * line capped at one turn, for the carrier contract's cap; a recorded line (its calls' audio
 * and wire, announced); an agent whose tools are an MCP
 * server's; and a chat agent whose sessions hold hibernatable sockets. Served with the repository's
 * wrangler.toml in place of its `main` (`startServer({ main })` in scripts/lib/harness.mjs;
 * vitest.config.ts for the workers tests). The greeter itself, and every gateway built on
 * `createLiveline` alone, carries none of this.
 */
import { type AgentDefinition, createLiveline, defineAgent } from "liveline";
import { billing, greeter, phoneNumbers } from "../../examples/greeter/src/agent.js";
import { naiveRelay } from "../../src/measurement/naive-relay.js";
import { CAPPED_LINE, DESK_LINE, RECORDED_ANNOUNCEMENT, RECORDED_LINE } from "./lines.js";

const capped = defineAgent({ ...(greeter as AgentDefinition), limits: { maxTurns: 1 } });
/** The billing desk with its calls recorded, and its callers told so first. */
const recorded = defineAgent({
  ...(billing as AgentDefinition),
  recording: { audio: true, wire: true, announce: RECORDED_ANNOUNCEMENT },
});
/** The greeter as a chat agent left open in tabs: its sessions hold hibernatable sockets. */
const chat = defineAgent({ ...(greeter as AgentDefinition), sockets: "hibernatable" });

/**
 * An order desk whose tools are a remote MCP server's (MCP_DESK_URL, its token MCP_DESK_TOKEN):
 * the workers tests point it at the real MCP server they start (scripts/lib/mcp-test-server.mjs).
 */
const desk = defineAgent<{ MCP_DESK_URL?: string; MCP_DESK_TOKEN?: string }>((session) => ({
  instructions:
    "You are the order desk. Look orders up with desk__lookup_order, place them with desk__place_order, tell customers with desk__send_notice and build reports with desk__slow_report.",
  tools: [],
  mcp:
    session.env.MCP_DESK_URL === undefined
      ? []
      : [
          {
            name: "desk",
            url: session.env.MCP_DESK_URL,
            // A per-tenant header, as a per-user key would be: sessions of one tenant share
            // a listing, another tenant's are listed afresh.
            headers: {
              Authorization: `Bearer ${session.env.MCP_DESK_TOKEN ?? ""}`,
              "X-Tenant": String(session.metadata.tenant ?? ""),
            },
            deny: ["admin_reset"],
            policy: {
              timeoutMs: 8_000,
              tools: {
                slow_report: { progress: "say", timeoutMs: 4_000 },
                // Places an order once per idempotency key: safe to run again after a restart.
                place_order: { idempotent: true },
              },
            },
          },
        ],
}));

/**
 * The order desk on the Cloudflare-limits tests' own MCP server (MCP_LIMITS_URL, no token;
 * its slow_report streams progress for 600 ms): test/cloudflare-limits.workers.test.ts.
 */
const quickDesk = defineAgent<{
  MCP_DESK_URL?: string;
  MCP_DESK_TOKEN?: string;
  MCP_LIMITS_URL?: string;
}>((session) => ({
  instructions: "You are the order desk. Build reports with desk__slow_report.",
  tools: [],
  mcp:
    session.env.MCP_LIMITS_URL === undefined
      ? []
      : [
          {
            name: "desk",
            url: session.env.MCP_LIMITS_URL,
            policy: { tools: { slow_report: { progress: "tell", timeoutMs: 4_000 } } },
          },
        ],
}));

const liveline = createLiveline({
  agents: { greeter, billing, capped, desk, chat, quick_desk: quickDesk, recorded },
  phoneNumbers: {
    ...phoneNumbers,
    [CAPPED_LINE]: "capped",
    [DESK_LINE]: "desk",
    [RECORDED_LINE]: "recorded",
  },
  naiveRelay,
});

export default { fetch: liveline.fetch };
export const { SessionObject, GeminiSimulatorObject } = liveline;
