/**
 * An app of its own that uses liveline from its packed tarball: its own agent (a function of
 * the session: the instructions name the signed-in user), its own tool reading its own KV
 * binding, and its own route beside liveline's.
 */
import { createLiveline, defineAgent, defineTool, type ToolContext } from "liveline";
import { simulator } from "liveline/simulator";
import { z } from "zod";

interface AppEnv {
  PRICES: KVNamespace;
  API_KEY?: string;
}

const lookupPrice = defineTool({
  name: "lookup_price",
  description: "Look up the price of a plan.",
  args: z.object({ plan: z.string().default("starter") }),
  runOn: "server",
  followUp: "speak",
  run: async ({ plan: asked }, ctx: ToolContext<AppEnv>) => {
    // The model may pass the plan's name within words: take the first known plan named.
    const plan = ["starter", "team"].find((p) => asked.toLowerCase().includes(p)) ?? asked;
    return {
      plan,
      price: await ctx.env.PRICES.get(plan),
      quotedFor: typeof ctx.metadata.user === "string" ? ctx.metadata.user : null,
    };
  },
});

const shop = defineAgent<AppEnv>((session) => {
  if (typeof session.metadata.user !== "string") throw new Error("metadata.user is required");
  return {
    instructions: `You quote plan prices to ${session.metadata.user}.`,
    tools: [lookupPrice],
    // Served as Gemini 3.1 by the simulator (every call blocks; text as realtimeInput).
    model: "gemini-3.1-flash-live-preview",
  };
});

/** An agent that refuses its sessions once `metadata.failAfter` (ms since the epoch) passed. */
const fragile = defineAgent((session) => {
  if (Date.now() > Number(session.metadata.failAfter ?? Number.POSITIVE_INFINITY))
    throw new Error("this agent no longer takes the session");
  return { instructions: "You are fragile.", tools: [] };
});

const liveline = createLiveline({ agents: { shop, fragile }, extensions: [simulator] });

export default {
  async fetch(request: Request, env: AppEnv, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(request.url);
    const price = url.pathname.match(/^\/prices\/([a-z]+)$/);
    if (price && request.method === "PUT") {
      if (request.headers.get("Authorization") !== `Bearer ${env.API_KEY}`)
        return new Response(null, { status: 401 });
      await env.PRICES.put(price[1]!, await request.text());
      return new Response(null, { status: 204 });
    }
    return liveline.fetch(request, env, ctx);
  },
};

export const { SessionObject, GeminiSimulatorObject } = liveline;
