/**
 * npm run check:live -- --provider gemini|openai|gpt-live [--simulator] [--base URL] [--out DIR]
 *                       [--settle MS]
 *
 * The scenarios that matter, against the real service: a greeting with fire-and-forget tools,
 * a spoken result, a rebuild (the session's object killed mid-session, the model connection
 * made again from the log), a duplicate-prone turn (a side effect beside a spoken lookup), a
 * barge-in (a line typed over a long reply) and, on GPT-Live, the one-chain case (two calls
 * of one reply, one answered slowly). Each session records its model wire; the script prints
 * a table of what held, and one of the "assumed" items of docs/MODELS.md that the wire
 * confirmed or contradicted. `--out DIR` keeps each wire recording (a fixture to contribute:
 * test/fixtures/recordings/, replayed by npm test).
 *
 * With a key it needs nothing else: it starts `wrangler dev` (the measurement worker, with
 * FAULT_INJECTION on for the rebuild) with the key from .dev.vars or the environment
 * (GEMINI_API_KEY, OPENAI_API_KEY). `--simulator`: the same code path against the built-in
 * simulator's face of that wire (the provider's URL pointed at it, a placeholder key) —
 * evidence of nothing about the service, only that the check runs. `--base URL`: a gateway
 * already running (it must have FAULT_INJECTION on, and its API key be the harness's).
 * Details: docs/RECORDINGS.md.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join as joinPath } from "node:path";
import {
  API_KEY,
  createSession,
  flags,
  freePort,
  history,
  join,
  MEASUREMENT_WORKER,
  numFlag,
  playTurn,
  ROOT,
  sleep,
  startServer,
  table,
  timeline,
} from "./lib/harness.mjs";
import { readWireRecording } from "./lib/replay.mjs";

const PROVIDERS = ["gemini", "openai", "gpt-live"];
const KEY_OF = { gemini: "GEMINI_API_KEY", openai: "OPENAI_API_KEY", "gpt-live": "OPENAI_API_KEY" };
/** Where a provider's simulator face is, on the gateway itself (`--simulator`). */
const FACE_OF = {
  gemini: ["GEMINI_LIVE_URL", "/simulator/gemini"],
  openai: ["OPENAI_REALTIME_URL", "/simulator/openai"],
  "gpt-live": ["GPT_LIVE_URL", "/v1/live/sessions"],
};
/** The simulator's pace: words a twentieth of real time (a real service takes its own). */
const FACE_KNOBS = "timeScale=0.05";

const auth = { Authorization: `Bearer ${API_KEY}` };

/**
 * How long to listen after a turn's end for anything the model says after it (a regenerated
 * reply comes within a second or two on the real services): `--settle MS`, default 2500.
 */
let SETTLE_MS = 2500;

/** The model's words in frames (text, and the transcript of its speech). */
const saidOf = (frames) =>
  frames
    .filter((f) => f.type === "text" || f.type === "transcript")
    .map((f) => f.text)
    .join("");
const endsOf = (frames) =>
  frames.filter((f) => f.type === "turn_complete" || f.type === "interrupted");
const errorsOf = (frames) => frames.filter((f) => f.type === "error");
/** An error frame breaks a scenario (a stalled turn ends with `model_timeout`): named in its row. */
const errorNote = (frames) =>
  errorsOf(frames).length === 0
    ? ""
    : `; errors ${errorsOf(frames)
        .map((e) => e.code)
        .join(", ")}`;

/** Each call id's tool_call count in a log: more than one is a call run twice. */
function runsTwice(events) {
  const runs = new Map();
  for (const e of events)
    if (e.kind === "tool_call") runs.set(e.callId, (runs.get(e.callId) ?? 0) + 1);
  return [...runs].filter(([, n]) => n > 1).map(([id]) => id);
}

/** A reply said twice over: the same words twice (a regeneration), or a tag seen twice. */
function saidTwice(text) {
  const said = text.replace(/\s+/g, " ").trim();
  const tags = said.match(/\[#r\d+\]/g) ?? [];
  if (new Set(tags).size !== tags.length) return true;
  const half = said.length / 2;
  return (
    said.length > 16 &&
    Number.isInteger(half) &&
    said.slice(0, half).trim() === said.slice(half).trim()
  );
}

const names = (events) => events.filter((e) => e.kind === "tool_call").map((e) => e.name);

/** The barge-in scenario's line, typed over the story (found again in the record by its words). */
const BARGE_IN_LINE = "Stop. What are your hours?";

/**
 * The scenarios. Each runs on a session of its own, its wire recorded; `run` returns whether
 * it held and what was seen. A real model decides for itself whether to call a tool: a
 * scenario whose tool was not called says so ("not shown"), never "held".
 */
const SCENARIOS = [
  {
    id: "greeting",
    label: "greeting with fire-and-forget tools",
    async run({ client, sessionId, server }) {
      const { frames, ended } = await playTurn(client, "Hi!", {
        timeoutMs: 30_000,
        settleMs: SETTLE_MS,
      });
      const events = await history(server, sessionId);
      const twice = runsTwice(events);
      const held =
        ended &&
        endsOf(frames).length === 1 &&
        !saidTwice(saidOf(frames)) &&
        twice.length === 0 &&
        errorsOf(frames).length === 0;
      return {
        held,
        detail: `${endsOf(frames).length} turn end(s); tools ${names(events).join(", ") || "none"}${twice.length > 0 ? `; run twice: ${twice.join(", ")}` : ""}${saidTwice(saidOf(frames)) ? "; the reply said twice" : ""}${errorNote(frames)}`,
      };
    },
  },
  {
    id: "spoken_result",
    label: "a spoken result",
    async run({ client, sessionId, server }) {
      await playTurn(client, "Hi!", { timeoutMs: 30_000, settleMs: SETTLE_MS / 2 });
      const { frames, ended } = await playTurn(
        client,
        "Look it up in the FAQ please: what are your opening hours?",
        { timeoutMs: 30_000, settleMs: SETTLE_MS },
      );
      const events = await history(server, sessionId);
      const result = events.find((e) => e.kind === "tool_result" && e.name === "lookup_faq");
      if (result === undefined)
        return {
          held: null,
          detail: `not shown: lookup_faq was not called (tools: ${names(events).join(", ") || "none"})`,
        };
      const resultAt = frames.findIndex(
        (f) => f.type === "tool_result" && f.callId === result.callId,
      );
      const after = saidOf(frames.slice(resultAt + 1));
      const spoken = /monday|9:00|nine|saturday/i.test(after);
      return {
        held: ended && spoken && endsOf(frames).length === 1 && errorsOf(frames).length === 0,
        detail: `${
          spoken
            ? "the result's hours were said after it"
            : `not said after the result: "${after.slice(0, 80)}"`
        }${errorNote(frames)}`,
      };
    },
  },
  {
    id: "rebuild",
    label: "a rebuild (the object killed mid-session)",
    async run({ client, sessionId, server, wsUrl }) {
      await playTurn(client, "Hello, my name is Ada.", {
        timeoutMs: 30_000,
        settleMs: SETTLE_MS / 2,
      });
      const before = await history(server, sessionId);
      const res = await fetch(`${server.base}/v1/sessions/${sessionId}/restart`, {
        method: "POST",
        headers: auth,
      });
      if (res.status !== 200)
        return {
          held: null,
          detail: `not shown: the restart route answered ${res.status} (FAULT_INJECTION must be on)`,
        };
      client.close();
      const again = (await join(`${wsUrl}&resumeFrom=${before.at(-1)?.seq ?? 0}`)).client;
      const { frames, ended } = await playTurn(again, "What is my name?", {
        timeoutMs: 30_000,
        settleMs: SETTLE_MS / 2,
      });
      again.close();
      const rows = await timeline(server, sessionId);
      const invalid = rows.some((r) => r.kind === "CONTEXT_INVALID");
      const closed = rows.filter((r) => r.kind === "UPSTREAM_CLOSED").map((r) => r.detail?.code);
      const named = /ada/i.test(saidOf(frames));
      return {
        held: ended && !invalid && !closed.includes(1007) && errorsOf(frames).length === 0,
        detail: `${named ? "the model knew the name" : "the name was not said"}; ${invalid ? "CONTEXT_INVALID; " : ""}${closed.length > 0 ? `closes ${closed.join(",")}` : "no close refused the seed"}`,
        ended: true,
      };
    },
  },
  {
    id: "duplicate_prone",
    label: "a duplicate-prone turn (a side effect beside a spoken lookup)",
    async run({ client, sessionId, server }) {
      await playTurn(client, "Hi!", { timeoutMs: 30_000, settleMs: SETTLE_MS / 2 });
      const { frames, ended } = await playTurn(
        client,
        "Please set my preference: short answers. And look up the FAQ: what are your hours?",
        { timeoutMs: 30_000, settleMs: SETTLE_MS },
      );
      const events = await history(server, sessionId);
      const twice = runsTwice(events);
      return {
        held:
          ended &&
          endsOf(frames).length === 1 &&
          !saidTwice(saidOf(frames)) &&
          twice.length === 0 &&
          errorsOf(frames).length === 0,
        detail: `tools ${names(events).join(", ") || "none"}; ${saidTwice(saidOf(frames)) ? "the reply said twice" : "said once"}${errorNote(frames)}`,
      };
    },
  },
  {
    id: "barge_in",
    label: "a barge-in (a line typed over a long reply)",
    async run({ client, provider, sessionId, server }) {
      client.send({
        type: "text",
        text: "Tell me a long story about the sea, at least ten sentences.",
      });
      const frames = [];
      const next = async (ms) => {
        const f = await client.next(ms);
        frames.push(f);
        if (f.type === "tool_call" && f.runOn === "client")
          client.send({ type: "tool_result", callId: f.callId, result: { shown: true } });
        return f;
      };
      for (;;) {
        const f = await next(30_000);
        if (f.type === "text" || f.type === "transcript") break;
        if (endsOf([f]).length > 0)
          return { held: null, detail: "not shown: the reply ended before a line could cut it" };
      }
      client.send({ type: "text", text: BARGE_IN_LINE });
      const deadline = Date.now() + 30_000;
      while (endsOf(frames).length < 2 && Date.now() < deadline)
        await next(Math.max(1, deadline - Date.now())).catch(() => null);
      await sleep(SETTLE_MS / 2);
      while (await next(50).catch(() => null)) {}
      const ends = endsOf(frames);
      const story = frames.find((f) => f.turnId !== undefined)?.turnId;
      const storyEnd = ends.filter((f) => f.turnId === story);
      // GPT-Live has no turns to cut: a typed line waits for the answer under way (docs/PROTOCOL-REFERENCE.md,
      // "A model without turns"); elsewhere the line cuts the story.
      const expected = provider === "gpt-live" ? "turn_complete" : "interrupted";
      // A story told faster than the line travels (a fast-paced stand-in on a loaded machine)
      // had ended before the gateway took the line: nothing was left to cut. The record's order
      // says so; a story that ended after the line was taken is judged.
      const events = await history(server, sessionId);
      const storyEnded = events.findIndex(
        (e) => e.turnId === story && (e.kind === "turn_complete" || e.kind === "interrupted"),
      );
      const lineTaken = events.findIndex((e) => e.kind === "user" && e.text === BARGE_IN_LINE);
      if (expected === "interrupted" && storyEnded !== -1 && storyEnded < lineTaken)
        return { held: null, detail: "not shown: the story had ended before the line was taken" };
      return {
        held: ends.length === 2 && storyEnd.length === 1 && storyEnd[0].type === expected,
        detail: `the story's turn ended ${storyEnd.map((f) => f.type).join(", ") || "never"} (${expected} expected); ${ends.length} turn end(s)`,
      };
    },
  },
  {
    id: "one_chain",
    label: "one chain: two calls of one reply, one answered 2 s late",
    only: "gpt-live",
    async run({ client, sessionId, server }) {
      await playTurn(client, "Hi!", { timeoutMs: 30_000, settleMs: SETTLE_MS / 2 });
      client.send({
        type: "text",
        text: "Look up the FAQ for your hours, and check my profile: which plan am I on?",
      });
      const frames = [];
      let ended = false;
      const deadline = Date.now() + 40_000;
      while (!ended && Date.now() < deadline) {
        const f = await client.next(Math.max(1, deadline - Date.now())).catch(() => null);
        if (f === null) break;
        frames.push(f);
        // The app's tool answers late: the other call's output went long before.
        if (f.type === "tool_call" && f.runOn === "client")
          setTimeout(
            () =>
              client.send({
                type: "tool_result",
                callId: f.callId,
                result: { name: "Ada", plan: "team" },
              }),
            2000,
          );
        if (endsOf([f]).length > 0) ended = true;
      }
      await sleep(SETTLE_MS / 2);
      const events = await history(server, sessionId);
      const called = names(events);
      if (!(called.includes("lookup_faq") && called.includes("get_user_profile")))
        return {
          held: null,
          detail: `not shown: the backend called ${called.join(", ") || "nothing"}`,
        };
      return {
        held: ended && errorsOf(frames).length === 0 && runsTwice(events).length === 0,
        detail: `both calls answered (one 2 s late); ${errorsOf(frames).length} error(s)`,
      };
    },
  },
];

/** A wire entry's frame from the model, parsed (null when it is not JSON). */
function modelFrame(entry) {
  if (entry.dir !== "from_model" || entry.text === undefined) return null;
  try {
    return JSON.parse(entry.text);
  } catch {
    return null;
  }
}
function modelOut(entry) {
  if (entry.dir !== "to_model" || entry.text === undefined) return null;
  try {
    return JSON.parse(entry.text);
  } catch {
    return null;
  }
}

/** Whether every `error` event on a wire was followed by more events on its connection. */
function errorsLeaveConnectionOpen(wires) {
  let errors = 0;
  let open = 0;
  for (const { entries } of wires)
    for (const [i, e] of entries.entries()) {
      if (modelFrame(e)?.type !== "error") continue;
      errors++;
      if (entries.slice(i + 1).some((n) => n.dir === "from_model" && n.conn === e.conn)) open++;
    }
  return errors === 0
    ? ["not observed", "no error event"]
    : [
        open === errors ? "confirmed" : "contradicted",
        `${open} of ${errors} errors followed by more events`,
      ];
}

/**
 * The "assumed" items of docs/MODELS.md (and the field observations liveline's records rest
 * on) that a wire can show: each reads every recorded wire of the run and says `confirmed`,
 * `contradicted` or `not observed`, with what it saw.
 */
const ASSUMED = {
  gemini: [
    {
      item: "the seed itself is not answered (MODELS.md: assumed)",
      judge(wires) {
        let seeds = 0;
        let answered = 0;
        for (const { entries } of wires) {
          const byConn = Map.groupBy(
            entries.filter((e) => e.conn !== undefined),
            (e) => e.conn,
          );
          for (const conn of byConn.values()) {
            const seedAt = conn.findIndex(
              (e) =>
                modelOut(e)?.clientContent?.turnComplete === true &&
                modelOut(e)?.clientContent?.turns?.length > 1,
            );
            if (seedAt === -1) continue;
            seeds++;
            for (const e of conn.slice(seedAt + 1)) {
              // Audio streaming on is not a new input; a line (clientContent, or 3.x's
              // realtimeInput.text) is, and what follows it answers the line, not the seed.
              const out = e.dir === "to_model" ? modelOut(e) : null;
              if (
                out !== null &&
                (!("realtimeInput" in out) || out.realtimeInput?.text !== undefined)
              )
                break;
              if (modelFrame(e)?.serverContent?.modelTurn !== undefined) {
                answered++;
                break;
              }
            }
          }
        }
        if (seeds === 0)
          return [
            "not observed",
            "no connection was seeded (a resumption handle took the rebuild's place)",
          ];
        return answered === 0
          ? ["confirmed", `${seeds} seed(s), none answered`]
          : ["contradicted", `${answered} of ${seeds} seeds answered`];
      },
    },
    {
      item: "2.x ends its turn at a toolCall without waiting for results; 3.x waits (O1, O6: the capability record)",
      judge(wires) {
        // A call whose turnComplete came before liveline sent its results shows a model that
        // did not wait; one answered first shows nothing either way.
        let endedFirst = 0;
        let answeredFirst = 0;
        let waits = false;
        for (const { header, entries } of wires) {
          waits ||= header.capabilities.turnCompleteWaitsForResults === true;
          for (const [i, e] of entries.entries()) {
            if (modelFrame(e)?.toolCall === undefined) continue;
            for (const next of entries.slice(i + 1)) {
              if (modelOut(next)?.toolResponse !== undefined) {
                answeredFirst++;
                break;
              }
              if (modelFrame(next)?.serverContent?.turnComplete === true) {
                endedFirst++;
                break;
              }
            }
          }
        }
        const seen = `${endedFirst} toolCall(s) ended the turn before their results went, ${answeredFirst} were answered first (the record says the model ${waits ? "waits" : "does not wait"})`;
        if (endedFirst === 0) return ["not observed", seen];
        return [waits ? "contradicted" : "confirmed", seen];
      },
    },
    {
      item: "server frames are binary JSON (O4)",
      judge(wires) {
        const frames = wires.flatMap((w) => w.entries.filter((e) => e.dir === "from_model"));
        if (frames.length === 0) return ["not observed", "no frame"];
        const binary = frames.filter((e) => e.binary === true).length;
        return [
          binary === frames.length ? "confirmed" : "contradicted",
          `${binary} of ${frames.length} binary`,
        ];
      },
    },
    {
      item: "SILENT is not honoured by 2.5 (O2: assumed until a recording shows otherwise)",
      judge(wires) {
        const claims = wires.some((w) => w.header.capabilities.silentHonoured === true);
        return claims
          ? [
              "not observed",
              "the record claims SILENT: a repeat after a silent result would show here (see the greeting's row)",
            ]
          : [
              "not observed",
              "liveline withholds silent results from this model: nothing to honour",
            ];
      },
    },
  ],
  openai: [
    {
      item: "an `error` event leaves the connection open (API reference)",
      judge: errorsLeaveConnectionOpen,
    },
    {
      item: "each response.create is answered by one response (response.created … response.done)",
      judge(wires) {
        let asked = 0;
        let done = 0;
        for (const { entries } of wires)
          for (const e of entries) {
            if (modelOut(e)?.type === "response.create") asked++;
            if (modelFrame(e)?.type === "response.done") done++;
          }
        if (asked === 0) return ["not observed", "no response.create"];
        return [done >= asked ? "confirmed" : "contradicted", `${asked} asked, ${done} done`];
      },
    },
  ],
  "gpt-live": [
    {
      item: "a backend response ends with response.completed, response.failed or response.incomplete (assumed)",
      judge(wires) {
        const started = new Set();
        const ended = new Set();
        for (const { entries } of wires)
          for (const e of entries) {
            const inner = modelFrame(e)?.type === "response.event" ? modelFrame(e).event : null;
            const id = inner?.response?.id;
            if (id === undefined) continue;
            if (inner.type === "response.created") started.add(id);
            if (
              ["response.completed", "response.failed", "response.incomplete"].includes(inner.type)
            )
              ended.add(id);
          }
        if (started.size === 0) return ["not observed", "no backend response"];
        const open = [...started].filter((id) => !ended.has(id));
        return [
          open.length === 0 ? "confirmed" : "contradicted",
          `${started.size} started, ${open.length} without a terminal event`,
        ];
      },
    },
    {
      item: "response.create is refused while a call has no output (assumed; the field's one-chain probe)",
      judge(wires) {
        const refused = wires.flatMap((w) =>
          w.entries.filter(
            (e) =>
              modelFrame(e)?.type === "error" &&
              modelFrame(e)?.error?.code === "function_call_outputs_required",
          ),
        );
        return refused.length === 0
          ? [
              "not observed",
              "liveline never asked early: no function_call_outputs_required (the one-chain row holds)",
            ]
          : ["confirmed", `${refused.length} refusal(s): liveline asked too early (a defect)`];
      },
    },
    {
      item: "an `error` alone leaves the session open (assumed)",
      judge: errorsLeaveConnectionOpen,
    },
  ],
};

/** The key a real run needs, from the environment or .dev.vars (never printed). */
function keyConfigured(provider) {
  const name = KEY_OF[provider];
  if (process.env[name]) return { vars: { [name]: process.env[name] }, source: "the environment" };
  const devVars = joinPath(ROOT, ".dev.vars");
  if (
    existsSync(devVars) &&
    new RegExp(`^${name}\\s*=\\s*\\S`, "m").test(readFileSync(devVars, "utf8"))
  )
    return { vars: {}, source: ".dev.vars" };
  return null;
}

/** The gateway to run against: `--base`, or a wrangler dev started here. */
async function gatewayFor(provider, f) {
  if (typeof f.get("base") === "string") {
    const base = f.get("base");
    return {
      base,
      ws: base.replace(/^http/, "ws"),
      stop: async () => {},
      against: `the gateway at ${base}`,
    };
  }
  if (f.get("simulator") === true) {
    const port = await freePort();
    const [urlVar, path] = FACE_OF[provider];
    const server = await startServer({
      port,
      main: MEASUREMENT_WORKER,
      vars: {
        FAULT_INJECTION: "on",
        [KEY_OF[provider]]: "check-live-placeholder-key",
        [urlVar]: `ws://127.0.0.1:${port}${path}?${FACE_KNOBS}`,
      },
    });
    return {
      ...server,
      against: `the simulator's ${provider} face (no evidence about the service)`,
    };
  }
  const key = keyConfigured(provider);
  if (key === null) {
    console.error(
      `check:live needs ${KEY_OF[provider]} (in .dev.vars or the environment), or --simulator`,
    );
    process.exit(2);
  }
  const server = await startServer({
    main: MEASUREMENT_WORKER,
    vars: { FAULT_INJECTION: "on", ...key.vars },
  });
  return { ...server, against: `the real ${provider} service (key from ${key.source})` };
}

async function main() {
  const f = flags();
  const provider = f.get("provider");
  if (!PROVIDERS.includes(provider)) {
    console.error(
      `usage: npm run check:live -- --provider ${PROVIDERS.join("|")} [--simulator] [--base URL] [--out DIR]`,
    );
    process.exit(2);
  }
  SETTLE_MS = numFlag(f, "settle", SETTLE_MS);
  const out = typeof f.get("out") === "string" ? f.get("out") : null;
  if (out !== null) mkdirSync(out, { recursive: true });
  const server = await gatewayFor(provider, f);
  console.log(`check:live: ${provider}, against ${server.against}`);
  const rows = [];
  const wires = [];
  try {
    for (const scenario of SCENARIOS) {
      if (scenario.only !== undefined && scenario.only !== provider) continue;
      let outcome;
      let sessionId = null;
      const started = Date.now();
      try {
        const created = await createSession(server, { provider, recording: { wire: true } });
        sessionId = created.sessionId;
        const { client } = await join(created.wsUrl);
        try {
          outcome = await scenario.run({
            client,
            sessionId,
            server,
            wsUrl: created.wsUrl,
            provider,
          });
        } finally {
          client.close();
        }
      } catch (err) {
        outcome = {
          held: false,
          detail: `failed: ${err instanceof Error ? err.message : String(err)}`,
        };
      }
      const wire = sessionId === null ? null : await wireOf(server, sessionId);
      if (wire !== null) {
        wires.push(wire.recording);
        if (out !== null)
          writeFileSync(joinPath(out, `${provider}-${scenario.id}.wire.jsonl`), wire.text);
      }
      const verdict = outcome.held === null ? "not shown" : outcome.held ? "held" : "BROKEN";
      rows.push([scenario.label, verdict, outcome.detail]);
      console.log(`  ${scenario.id}: ${verdict} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    }
  } finally {
    await server.stop();
  }
  console.log(`\nWhat held (${provider}, ${server.against}):\n`);
  console.log(table(["scenario", "result", "seen"], rows));
  const assumed = ASSUMED[provider].map((a) => {
    const [verdict, seen] = a.judge(wires);
    return [a.item, verdict, seen];
  });
  console.log(`\nWhat the wire showed of docs/MODELS.md's assumptions (${provider}):\n`);
  console.log(table(["assumed", "verdict", "seen"], assumed));
  if (out !== null)
    console.log(`\nWire recordings in ${out}: replay one with npm run replay -- <file>.`);
  process.exitCode = rows.some((r) => r[1] === "BROKEN") ? 1 : 0;
}

/** A session's wire recording, once the session is ended (its last part written). */
async function wireOf(server, sessionId) {
  await fetch(`${server.base}/v1/sessions/${sessionId}`, { method: "DELETE", headers: auth });
  for (let attempt = 0; attempt < 20; attempt++) {
    const res = await fetch(`${server.base}/v1/sessions/${sessionId}/recording?kind=wire`, {
      headers: auth,
    });
    if (res.ok) {
      const text = await res.text();
      const recording = readWireRecording(text);
      if (
        recording.entries.some(
          (e) => e.dir === "durable" && e.frame.type === "status" && e.frame.state === "ended",
        )
      )
        return { text, recording };
    }
    await sleep(100);
  }
  return null;
}

await main();
