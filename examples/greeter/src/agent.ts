import { defineAgent, defineTool, endCallTool, transferCallTool } from "liveline";
import { z } from "zod";

/** A small built-in FAQ, so the demo answers something real without any backend. */
const FAQ: Record<string, string> = {
  hours: "We are open Monday to Friday, 9:00 to 17:00, and Saturday 10:00 to 14:00.",
  pricing: "The starter plan is free; the team plan is 12 euros per user per month.",
  support: "Write to support@example.com; we answer within one working day.",
  refunds: "Refunds are possible within 30 days of purchase, no questions asked.",
};

/** The words that ask about each entry ("When do you open?" is about hours). */
const ASKS: Record<string, RegExp> = {
  hours: /\b(hours?|open|opening|close[sd]?|closing|when)\b/i,
  pricing: /\b(pric(e|es|ing)|costs?|how much|plans?|fees?|pay)\b/i,
  support: /\b(support|help|contact|reach|e-?mail|problem)\b/i,
  refunds: /\b(refunds?|money back|return)\b/i,
};

function bestTopic(question: string): string | undefined {
  return Object.keys(FAQ).find((topic) => ASKS[topic]!.test(question));
}

/**
 * The demo agent, mirroring the field case of the fire-and-forget race: it greets, then
 * calls `suggest_topics` (UI chips on the client, silent), answers questions from the FAQ
 * (`lookup_faq`, spoken) asks the app for the user's profile (`get_user_profile`, on the client, spoken) and records
 * preferences (`set_preference`, silent).
 */
export const greeter = defineAgent({
  // A session's creator may give its own instructions, voice or language (POST /v1/sessions).
  allow: ["instructions", "voice", "language"],
  // The model gets a transfer_to_billing tool; liveline answers it and hands the caller over.
  handoffs: ["billing"],
  // Handed back to, it waits for the caller to speak (billing, by default, announces itself).
  arrival: "silent",
  instructions:
    "You are a friendly assistant. Greet the user briefly, then call suggest_topics with a few topics they could ask about. Use lookup_faq to answer questions about hours, pricing, support or refunds, get_user_profile when they ask about their own account, and set_preference when the user states a preference. On a phone call, call end_call when the caller says goodbye, and transfer_call when they ask for a person.",
  tools: [
    // On a phone call the greeter may hang up, after its goodbye has been heard.
    endCallTool,
    // …or put the caller through to the front desk (a number of the app's, never the model's).
    transferCallTool({ front_desk: "+15550003000" }),
    defineTool({
      name: "suggest_topics",
      description: "Show the user a few topics as tappable chips in the app.",
      args: z.object({ topics: z.array(z.string()).max(6).optional() }),
      runOn: "client",
      followUp: "silent",
    }),
    defineTool({
      name: "lookup_faq",
      description: "Look up the answer to a question about hours, pricing, support or refunds.",
      args: z.object({ question: z.string().min(1) }),
      runOn: "server",
      followUp: "speak",
      timeoutMs: 5_000,
      run: async ({ question }) => {
        const topic = bestTopic(question);
        return topic
          ? { topic, answer: FAQ[topic] }
          : {
              answer:
                "The FAQ has nothing on that; it covers opening hours, pricing, support and refunds.",
            };
      },
    }),
    defineTool({
      name: "get_user_profile",
      description: "Read the signed-in user's name and plan from the app; the answer is spoken.",
      args: z.object({}),
      runOn: "client",
      followUp: "speak",
    }),
    defineTool({
      name: "set_preference",
      description: "Remember a preference the user stated (a key and a value).",
      args: z.object({ key: z.string().min(1).default("note"), value: z.string().default("") }),
      runOn: "server",
      followUp: "silent",
      timeoutMs: 5_000,
      // A preference being saved is kept even if the caller is handed to billing meanwhile.
      onHandoff: "finish",
      // A preference is a short name and a value ("language": "French"); anything else (a
      // whole sentence as a key, no value) is not saved, and the model is told why.
      run: async ({ key, value }) =>
        value.trim() === "" || key.length > 40 || /[()?]/.test(key)
          ? { saved: false, why: "no preference was stated (a short key and its value)" }
          : { saved: true, key, value },
    }),
  ],
});

/** The billing specialist the greeter hands callers to (and who can hand them back). */
export const billing = defineAgent({
  instructions:
    "You are the billing specialist. Answer questions about invoices with lookup_invoice; on a phone call, ask the caller to type the invoice number on the keypad first. Hand the user back to the greeter for anything else.",
  handoffs: ["greeter"],
  // On a phone call, the keys typed reach lookup_invoice only: the model hears that an
  // entry was typed, never its digits.
  keypad: "tools",
  tools: [
    endCallTool,
    defineTool({
      name: "lookup_invoice",
      description:
        "Read an invoice: amount, due date and status. On a phone call, it reads the invoice number the caller typed.",
      args: z.object({ question: z.string().default("") }),
      runOn: "server",
      followUp: "speak",
      timeoutMs: 5_000,
      run: async (_args, ctx) => {
        const typed = ctx.phoneCall?.takeKeys() ?? null;
        // A real app looks the number up; its digits are not handed back to the model.
        const invoice = typed === null ? "the latest" : `the one typed (${typed.length} digits)`;
        return { invoice, amount: "12.00 EUR", due: "2026-12-01", status: "open" };
      },
    }),
  ],
});

/** The agent that answers each of the app's phone numbers (others reach the greeter). */
export const phoneNumbers = { "+15550002000": "billing" };

/**
 * An agent whose tools are a remote MCP server's: the order desk at ORDERS_MCP_URL (its key,
 * a secret, in ORDERS_MCP_TOKEN). The model calls them as orders__<tool>. Unset, the agent
 * has no tools. Try it against a local server: `node scripts/lib/mcp-test-server.mjs`, then
 * `npm run dev -- --var ORDERS_MCP_URL:<its URL>` and `npm run try -- --agent orders`.
 */
export const orders = defineAgent<{ ORDERS_MCP_URL?: string; ORDERS_MCP_TOKEN?: string }>(
  (session) => ({
    instructions:
      "You answer questions about orders. Look an order up with orders__lookup_order; build reports with orders__slow_report.",
    tools: [],
    mcp:
      session.env.ORDERS_MCP_URL === undefined
        ? []
        : [
            {
              name: "orders",
              url: session.env.ORDERS_MCP_URL,
              ...(session.env.ORDERS_MCP_TOKEN === undefined
                ? {}
                : { headers: { Authorization: `Bearer ${session.env.ORDERS_MCP_TOKEN}` } }),
              // A long report: the caller hears once that it is still being built.
              policy: { tools: { slow_report: { progress: "say" } } },
            },
          ],
  }),
);
