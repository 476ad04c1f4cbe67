/**
 * The workers tests' usage database gets liveline's own migrations (migrations/, read by
 * vitest.config.ts), as `wrangler d1 migrations apply` gives a deployment its table.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

await applyD1Migrations(env.USAGE_DB!, env.USAGE_MIGRATIONS);
