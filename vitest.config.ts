import { fileURLToPath } from "node:url";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";
import { tracePlugin } from "./test/path/trace-plugin.js";
import { MCP_DESK_TOKEN } from "./test/support/mcp-global-setup.js";
import { LongFilesFirst } from "./test/support/sequencer.js";

// In this repository `liveline` and `liveline/simulator` are its own source (as tsconfig's
// paths say); apps get dist/. Exact names: a prefix would send liveline/simulator to index.ts.
const source = (path: string) =>
  fileURLToPath(`${import.meta.url.replace(/[^/]*$/, "")}src/${path}`);
const liveline = [
  { find: /^liveline$/, replacement: source("index.ts") },
  { find: /^liveline\/simulator$/, replacement: source("simulator/index.ts") },
];

// The usage database's migrations, applied in the workers tests (test/support/usage-db-setup.ts).
const usageMigrations = await readD1Migrations(
  fileURLToPath(`${import.meta.url.replace(/[^/]*$/, "")}migrations`),
);

// The projects whose files run in workerd (workers, path, greeter): after the Node projects, as
// a group of their own. One runtime per worker, kept from file to file (not isolated): a fresh
// one per file cost 7 CPU-seconds, more than most files' tests (18 small files: 78 s → 20 s).
// Their files share its storage, so a test reads only the sessions it made. Five at once: the
// files mostly wait on real time (the project alone: 252 s with three, 170 s with five, at
// half the machine's CPU).
const inWorkerd = { isolate: false, maxWorkers: 5, sequence: { groupOrder: 1 } };

// The test tree mirrors src/, one folder per room; a file's name says where it runs (the word
// before `.test` names its project; docs/TESTING.md): `x.test.ts` in Node (unit: the pure core,
// adapters, codecs), `x.workers.test.ts` in workerd via miniflare (everything that touches the
// Worker, Durable Objects, sockets or storage), `x.path.test.ts` in workerd traced, and the
// end-to-end projects' `x.browser.test.mjs`, `x.client.test.{mjs,ts}`, `x.scripts.test.mjs`.
export default defineConfig({
  test: {
    // Three test files at once, whatever the core count: most of the suite waits (on real
    // sockets, timers, real-time audio), not computes. With two at a time the run used 645
    // CPU-seconds in 948 s of wall time on two cores (a third of the machine), so a third file
    // fits beside them (842 s with one file at a time, 428 s with two, when the suite was half
    // its size).
    maxWorkers: 3,
    // The files that run longest first (test/support/sequencer.ts).
    sequence: { sequencer: LongFilesFirst },
    projects: [
      {
        resolve: { alias: liveline },
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/**/*.{workers,path,client}.test.ts"],
          environment: "node",
        },
      },
      {
        // The demo page and timeline viewer in Debian's Chromium, the recordings replayed and
        // check:live: one wrangler dev for all of them (test/end-to-end/browser-gateway-setup.mjs).
        test: {
          name: "browser",
          include: ["test/**/*.browser.test.mjs"],
          environment: "node",
          testTimeout: 180_000,
          globalSetup: ["./test/end-to-end/browser-gateway-setup.mjs"],
        },
      },
      {
        // liveline/client in Node against a real gateway (its own wrangler dev).
        test: {
          name: "client",
          include: ["test/**/*.client.test.{mjs,ts}"],
          environment: "node",
          testTimeout: 180_000,
        },
      },
      {
        // The quick modes of npm run repro / bench / soak, the repository's commands and the
        // product under wrangler dev: the files that can share one wrangler dev take it from
        // test/support/scripts-gateway-setup.mjs; the others start their own.
        test: {
          name: "scripts",
          include: ["test/**/*.scripts.test.mjs"],
          environment: "node",
          testTimeout: 180_000,
          globalSetup: ["./test/support/scripts-gateway-setup.mjs"],
        },
      },
      {
        resolve: { alias: liveline },
        plugins: [
          // A function of what the global setup provides: the MCP test server's URL.
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            // The greeter with the naive relay as a second arm: the tests show each failure
            // in that arm and its absence in liveline.
            main: "./scripts/measurement/worker.ts",
            // A configured deployment: the secrets are set, origins are restricted and a
            // session takes few clients (so the limit is cheap to reach). Test-only values.
            miniflare: {
              bindings: {
                API_KEY: "test-api-key",
                TOKEN_SECRET: "test-token-secret",
                TWILIO_AUTH_TOKEN: "test-twilio-auth-token",
                // Signs the OpenAI SIP stand-in's webhooks (Standard Webhooks: whsec_ base64).
                OPENAI_WEBHOOK_SECRET: "whsec_dGVzdC1vcGVuYWktd2ViaG9vay1zZWNyZXQ=",
                // Nothing listens there: a transfer's request to the carrier fails at once.
                TWILIO_API_BASE_URL: "http://127.0.0.1:9",
                // Short, so a call whose stream does not come back ends within a test.
                CALL_RECONNECT_GRACE_MS: "3000",
                // The other carriers: test keys (the Telnyx pair's private half is in
                // test/telephony/carrier-contract.workers.test.ts); Telnyx calls run A-law both ways.
                TELNYX_PUBLIC_KEY: "yl/w8X7Qo9Qvfrmxbb3SHCCgTwhrTti3hS4uDxMTRJg=",
                TELNYX_CODEC: "PCMA",
                TELNYX_API_BASE_URL: "http://127.0.0.1:9",
                PLIVO_AUTH_ID: "MA00000000000000TEST",
                PLIVO_AUTH_TOKEN: "test-plivo-auth-token",
                PLIVO_API_BASE_URL: "http://127.0.0.1:9",
                VONAGE_SIGNATURE_SECRET: "test-vonage-signature-secret",
                VONAGE_API_BASE_URL: "http://127.0.0.1:9",
                ALLOWED_ORIGINS: "https://app.example",
                MAX_CLIENTS_PER_SESSION: "3",
                // Short, so the stale-socket test need not wait; it matters only when a session is full.
                STALE_SOCKET_MS: "1500",
                // Short, so each GPT-Live turn need not wait the 1.5 s of a deployment: the
                // quiet rule is the same (its own unit tests run it at the default).
                UTTERANCE_QUIET_MS: "400",
                SIMULATOR_ROUTE: "on",
                // Answers end with a tag [#rN]: the tests find a reply said twice by it.
                SIMULATOR_KNOBS: "answerTags=1",
                FAULT_INJECTION: "on",
                // Short recording parts, so a crash's loss is measured in a test's seconds.
                RECORDING_PART_MS: "500",
                USAGE_MIGRATIONS: usageMigrations,
                // The measurement worker's `desk` agent lists this server's tools.
                MCP_DESK_URL: inject("mcpDeskUrl"),
                MCP_DESK_TOKEN: MCP_DESK_TOKEN,
                // The `quick_desk` agent's: the Cloudflare-limits tests' own MCP server.
                MCP_LIMITS_URL: inject("limitsServers").mcp,
              },
            },
          })),
        ],
        test: {
          name: "workers",
          ...inWorkerd,
          include: ["test/**/*.workers.test.ts"],
          setupFiles: ["./test/support/usage-db-setup.ts"],
          // A real MCP server on localhost, for the whole run (its URL: MCP_DESK_URL); and the
          // endpoints of the Cloudflare-limits tests (a model that never answers, an OTLP
          // receiver, a WebSocket echo).
          globalSetup: [
            "./test/support/mcp-global-setup.ts",
            "./test/support/limits-global-setup.ts",
          ],
        },
      },
      {
        // A text frame's path through the Worker, traced call by call (test/path/trace-plugin.ts).
        resolve: { alias: liveline },
        plugins: [
          tracePlugin(fileURLToPath(`${import.meta.url.replace(/[^/]*$/, "")}src/`)),
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: { bindings: { API_KEY: "test-api-key", TOKEN_SECRET: "test-token-secret" } },
          }),
        ],
        test: { name: "path", ...inWorkerd, include: ["test/**/*.path.test.ts"] },
      },
      {
        // The greeter example app, from its own wrangler.toml (local dev: no secrets set).
        resolve: { alias: liveline },
        plugins: [cloudflareTest({ wrangler: { configPath: "./examples/greeter/wrangler.toml" } })],
        test: { name: "greeter", ...inWorkerd, include: ["examples/greeter/test/**/*.test.ts"] },
      },
    ],
  },
});
