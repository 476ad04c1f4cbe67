// `npm test`: the app's own Worker (this wrangler.toml) started by liveline/testing, with the
// simulator as the model; each `say` is one turn over a real WebSocket.
import { startGateway } from "liveline/testing";
import { afterAll, expect, it } from "vitest";

const gateway = await startGateway();
afterAll(() => gateway.stop());

it("answers a question about opening hours with lookup_hours", async () => {
  const session = await gateway.session();
  await session.say("hi"); // the greeting
  const turn = await session.say("What are your opening hours?");
  expect(turn.toolCalls.map((c) => c.name)).toEqual(["lookup_hours"]);
  expect(turn.text).toContain("Monday to Friday");
  session.close();
}, 30_000); // a first run starts workerd and opens the model's connection
