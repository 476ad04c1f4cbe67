// Types for the test runtime's `env` and `exports` (what `wrangler types` would generate).
type LivelineEnv = import("../../src/contracts/worker-env.js").Env;
declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import("../../examples/greeter/src/worker.js");
    durableNamespaces: "SessionObject" | "GeminiSimulatorObject";
  }
  interface Env extends LivelineEnv {
    GEMINI_SIMULATOR: DurableObjectNamespace<
      import("../../src/simulator/object.js").GeminiSimulatorObject
    >;
    /** The workers tests only: migrations/ as read by vitest.config.ts (usage-db-setup.ts). */
    USAGE_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** The workers tests only: the MCP test server and its token (mcp-global-setup.ts). */
    MCP_DESK_URL?: string;
    MCP_DESK_TOKEN?: string;
    /** The workers tests only: the Cloudflare-limits tests' MCP server (limits-global-setup.ts). */
    MCP_LIMITS_URL?: string;
  }
}
