// liveline/testing with an agent whose tools are an MCP server's: the test starts the server
// on localhost (here the repository's own, built with the official SDK) and points the app's
// agent at it through a var, as docs/TESTING.md shows.
import { afterAll, expect, it } from "vitest";
import { startMcpTestServer } from "../../scripts/lib/mcp-test-server.mjs";
import { startGateway } from "../../src/testing/index.js";

const orders = await startMcpTestServer(); // your MCP server, on localhost
const gateway = await startGateway({ vars: { ORDERS_MCP_URL: orders.url } });
afterAll(async () => {
  await gateway.stop();
  await orders.stop();
});

it("the order desk looks the order up on its MCP server, once", async () => {
  const session = await gateway.session({
    agent: "orders",
    calls: { 1: ["orders__lookup_order"] },
  });
  const turn = await session.say("where is order 42?");
  expect(turn.toolCalls.map((c) => c.name)).toEqual(["orders__lookup_order"]);
  expect(turn.toolResults).toEqual([
    expect.objectContaining({
      result: expect.objectContaining({
        structured: expect.objectContaining({ status: "shipped" }),
      }),
    }),
  ]);
  expect(orders.calls.map((c) => c.name)).toEqual(["lookup_order"]);
  session.close();
});

it("control: with the server's tools left out, the same script calls nothing", async () => {
  const session = await gateway.session({
    agent: "greeter",
    calls: { 1: ["orders__lookup_order"] },
  });
  const turn = await session.say("where is order 42?");
  expect(turn.toolCalls).toEqual([]);
  session.close();
});
