/**
 * npm run repro [-- --trials N --seed S --quick --only a,b --providers gemini,openai]
 *
 * The field failures, side by side: each scenario runs against the built-in simulator in
 * two arms — the naive relay (liveline with every protection off, `metadata.naive: true`)
 * and liveline — and for each provider's wire (the simulator's Gemini Live and OpenAI
 * Realtime faces; a scenario a provider cannot have says why), on a `wrangler dev` this
 * script starts and stops (and a second one for a scenario that needs other Worker vars, such
 * as a short MODEL_TIMEOUT_MS). Prints one table and
 * writes bench-results/repro.json. Trial i of a scenario uses simulator seed S + i.
 */
import {
  createSession,
  flags,
  history,
  join,
  MEASUREMENT_WORKER,
  machine,
  numFlag,
  pct,
  playTurn,
  pool,
  progress,
  sleep,
  startServer,
  table,
  textsOf,
  timeline,
  turnEndsOf,
  writeJson,
} from "./lib/harness.mjs";

const BASE_KNOBS = { timeScale: 0 };

/** A session on the simulator, speaking `provider`'s wire (gemini, or openai: its OpenAI face). */
async function open(server, arm, knobs, provider) {
  const created = await createSession(server, {
    provider: "simulator",
    metadata: {
      simulator: { ...BASE_KNOBS, ...knobs, wire: provider },
      ...(arm === "naive" ? { naive: true } : {}),
    },
  });
  const { client } = await join(created.wsUrl);
  return { client, sessionId: created.sessionId };
}

/**
 * A reply said twice: the simulator ends every answer with a tag [#rN] and repeats it word
 * for word when it regenerates, so a tag seen twice is a reply generated twice. (Comparing
 * text chunks is not enough: a chunk such as "is a " can occur twice in one honest reply.)
 */
function repeatedText(frames) {
  const tags =
    textsOf(frames)
      .join("")
      .match(/\[#r\d+\]/g) ?? [];
  return new Set(tags).size !== tags.length;
}

/**
 * Waits for the model connection to be replaced and live again, or for the session to give up
 * (ended, or a fatal error); true when it reconnected. A planned goAway move with nothing in
 * flight writes no status (PROTOCOL.md): the timeline shows it, a reconnect then a live row.
 */
async function reconnectedOrGaveUp(client, server, sessionId) {
  const deadline = Date.now() + 8000;
  let reconnected = false;
  while (Date.now() < deadline) {
    const states = client.statuses.map((st) => st.state);
    const r = states.indexOf("reconnecting");
    if (r !== -1 && states.slice(r).includes("live")) {
      reconnected = true;
      break;
    }
    const kinds = (await timeline(server, sessionId)).map((row) => row.kind);
    const moved = kinds.indexOf("UPSTREAM_RECONNECT");
    if (moved !== -1 && kinds.slice(moved).includes("UPSTREAM_LIVE")) {
      reconnected = true;
      break;
    }
    if (states.includes("ended") || client.frames.some((f) => f.type === "error" && f.fatal)) break;
    await sleep(20);
  }
  await sleep(50);
  return reconnected;
}

const SCENARIOS = [
  {
    id: "greeting_race",
    label: "greeting with fire-and-forget tool calls: duplicate replies",
    field: "95–100 % (ADK 1.24–1.27)",
    unit: "greetings",
    parallel: 4,
    async trial(server, arm, seed, provider) {
      const { client } = await open(server, arm, { race: 1, seed }, provider);
      try {
        const { frames } = await playTurn(client, "hi", { settleMs: 150 });
        const failed = repeatedText(frames) || turnEndsOf(frames).length > 1;
        return {
          units: 1,
          failed: failed ? 1 : 0,
          note: failed
            ? JSON.stringify(frames.map((f) => (f.type === "text" ? f.text : f.type)))
            : undefined,
        };
      } finally {
        client.close();
      }
    },
  },
  {
    id: "all_tool_turns",
    skip: {
      openai:
        "the race knob is Gemini's timing (an OpenAI response always ends at its call: greeting_race)",
    },
    label: "all tool turns: duplicate replies",
    field: "44 % (ADK 1.27.1, 275 trials)",
    unit: "tool turns",
    parallel: 8,
    async trial(server, arm, seed, provider) {
      // Two tool turns per session: the greeting's side effects, then a spoken lookup with
      // a side effect; each turn races (call after speech, turnComplete at once) with p 0.5.
      // Paced (timeScale 0.05: ~15 ms a word) so that a call that does not race is answered
      // while the model still speaks, as in the field.
      const { client } = await open(
        server,
        arm,
        {
          race: 0.5,
          seed,
          timeScale: 0.05,
          calls: "greeting:suggest_topics,set_preference;2:lookup_faq,set_preference",
        },
        provider,
      );
      try {
        let failed = 0;
        let note;
        for (const text of ["hi", "what are your hours? I prefer short answers"]) {
          const { frames } = await playTurn(client, text, { settleMs: 150 });
          if (repeatedText(frames)) {
            failed++;
            note ??= `turn "${text}": ${JSON.stringify(frames.map((f) => (f.type === "text" ? `text:${f.text}` : f.type)))}`;
          }
        }
        return { units: 2, failed, note };
      } finally {
        client.close();
      }
    },
  },
  {
    id: "spoken_result_lost",
    label: "spoken tool result lost",
    field: "reported, no rate",
    unit: "spoken results",
    parallel: 4,
    async trial(server, arm, seed, provider) {
      const { client } = await open(
        server,
        arm,
        { race: 1, seed, calls: "greeting:lookup_faq" },
        provider,
      );
      try {
        const { frames } = await playTurn(client, "hi", { settleMs: 300 });
        const said = textsOf(frames).join("").replace(/\s+/g, " ");
        const spoken = said.includes("lookup_faq found");
        return { units: 1, failed: spoken ? 0 : 1 };
      } finally {
        client.close();
      }
    },
  },
  {
    id: "reconnect_poisoned",
    // OpenAI Realtime has neither goAway nor resumption handles (a drop is seeded from the
    // log every time: the contract suite's drop scenario).
    skip: { openai: "no goAway / resumption on OpenAI" },
    label: "reconnect after a tool response: session poisoned",
    field: "100 % (ADK 1.32 repro)",
    unit: "sessions",
    parallel: 4,
    async trial(server, arm, seed, provider) {
      // A greeting with tool calls and their responses; then goAway, and the resumption
      // handle is not accepted (handleTtlMs=0), so the context is rebuilt from history.
      // Poisoned: the next user turn gets no reply.
      const { client, sessionId } = await open(
        server,
        arm,
        {
          seed,
          goAwayAfterTurns: 1,
          goAwayMs: 1000,
          handleTtlMs: 0,
          calls: "greeting:suggest_topics,lookup_faq",
        },
        provider,
      );
      try {
        await playTurn(client, "hi", { settleMs: 100 });
        const reconnected = await reconnectedOrGaveUp(client, server, sessionId);
        const { frames, ended } = await playTurn(client, "are you still there?", {
          settleMs: 50,
          timeoutMs: 5000,
        });
        const answered =
          ended &&
          textsOf(frames).length > 0 &&
          !frames.some((f) => f.type === "error" && f.fatal === true);
        const fatal = [...client.frames].find((f) => f.type === "error");
        return {
          units: 1,
          failed: answered ? 0 : 1,
          note: answered
            ? undefined
            : `reconnected=${reconnected} ${fatal ? String(fatal.message) : "no reply"}`,
        };
      } finally {
        client.close();
      }
    },
  },
  {
    id: "handle_refused",
    skip: { openai: "no resumption handles on OpenAI" },
    label: "reconnect with the handle refused: session answers",
    field: "1007 on every rebuild with tool parts (pipecat issue 4926)",
    unit: "sessions",
    parallel: 4,
    async trial(server, arm, seed, provider) {
      // A tool turn whose call and result are in the log; then goAway, and the resumption
      // handle is refused (expired, another region, a restart), so the conversation is
      // seeded on a new connection. The strict simulator refuses tool parts in the seed as
      // the service does. Answered: the next turn ends once, and the model remembers the call.
      const { client, sessionId } = await open(
        server,
        arm,
        {
          seed,
          goAwayAfterTurns: 3,
          goAwayMs: 1000,
          handleTtlMs: 0,
          calls: "1:;2:lookup_faq;*:",
        },
        provider,
      );
      try {
        await playTurn(client, "hi", { settleMs: 50 });
        await playTurn(client, "please look up the faq", { settleMs: 150 });
        await reconnectedOrGaveUp(client, server, sessionId);
        const { frames, ended } = await playTurn(client, "what do you remember", {
          settleMs: 100,
          timeoutMs: 5000,
        });
        const said = textsOf(frames).join("");
        const answered =
          ended && turnEndsOf(frames).length === 1 && said.includes("[called lookup_faq");
        const error = [...client.frames].find((f) => f.type === "error");
        return {
          units: 1,
          failed: answered ? 0 : 1,
          note: answered ? undefined : error ? String(error.message) : `said: ${said.slice(0, 80)}`,
        };
      } finally {
        client.close();
      }
    },
  },
  {
    id: "empty_reply_halt",
    label: "empty reply after tools, 7+ parallel sessions: silent halt",
    field: "15–29 %",
    unit: "tool turns",
    parallel: 8,
    async trial(server, arm, seed, provider) {
      // A blocking lookup; the reply that answers its result is empty with p 0.25.
      const { client } = await open(
        server,
        arm,
        {
          seed,
          emptyRate: 0.25,
          calls: "greeting:lookup_faq",
        },
        provider,
      );
      try {
        const { frames } = await playTurn(client, "hi", { settleMs: 150 });
        const result = frames.findIndex((f) => f.type === "tool_result");
        const after = result === -1 ? frames : frames.slice(result + 1);
        const said = after.some((f) => f.type === "text");
        const told = frames.some((f) => f.type === "error");
        return { units: 1, failed: said || told ? 0 : 1 };
      } finally {
        client.close();
      }
    },
  },
  {
    id: "alike_answers_quick",
    label: "honest answers that open alike, lines 250 ms apart: answer dropped or turn left open",
    field: "issue 8: 5 of 5 sessions hung",
    unit: "user turns",
    parallel: 4,
    async trial(server, arm, seed, provider) {
      // The greeter as `npm run dev` serves it (greeting with client chips), paced; every
      // honest answer opens "Sure. You said: …" (or alike). Each line goes out 250 ms after
      // the previous turn's end; its own turn must end once, with its own answer.
      const { client } = await open(server, arm, { seed, timeScale: 0.05 }, provider);
      const lines = ["one", "two", "three", "four"];
      try {
        await playTurn(client, "hi", { settleMs: 250 });
        let failed = 0;
        let note;
        for (const line of lines) {
          const { frames } = await playTurn(client, line, { settleMs: 250, timeoutMs: 8000 });
          const user = frames.find((f) => f.type === "user" && f.text === line);
          const own = frames.filter((f) => user && f.turnId === user.turnId);
          const ends = turnEndsOf(own);
          const ok =
            user !== undefined &&
            textsOf(own).join("").includes(`“${line}”`) &&
            ends.length === 1 &&
            ends[0].type === "turn_complete";
          if (!ok) {
            failed++;
            note ??= `"${line}": ${JSON.stringify(own.map((f) => (f.type === "text" ? f.text : f.type)))}`;
          }
        }
        return { units: lines.length, failed, note };
      } finally {
        client.close();
      }
    },
  },
  {
    id: "ignores_silent",
    skip: {
      openai: "OpenAI has no SILENT to ignore: a silent result is an item without response.create",
    },
    label: "model ignores SILENT against its record, next line at once: duplicate replies shown",
    field: "O2 (field report)",
    unit: "sessions",
    parallel: 4,
    extra: "answers lost",
    async trial(server, arm, seed, provider) {
      // The capability record says SILENT is honoured; the model ignores it and says its
      // greeting again when the chips' result arrives — just as the user sends the next line.
      const { client } = await open(
        server,
        arm,
        {
          seed,
          race: 1,
          ignoreSilent: 1,
          timeScale: 0.05,
        },
        provider,
      );
      try {
        const greeting = await playTurn(client, "hi", { settleMs: 20 });
        const line = "what are your hours?";
        const next = await playTurn(client, line, { settleMs: 400, timeoutMs: 8000 });
        const all = [...greeting.frames, ...next.frames];
        const user = next.frames.find((f) => f.type === "user" && f.text === line);
        const own = next.frames.filter((f) => user && f.turnId === user.turnId);
        const answered = textsOf(own).join("").includes(`“${line}”`);
        const failed = repeatedText(all) || turnEndsOf(own).length > 1;
        return {
          units: 1,
          failed: failed ? 1 : 0,
          extra: answered ? 0 : 1,
          note:
            failed || !answered
              ? JSON.stringify(all.map((f) => (f.type === "text" ? f.text : f.type)))
              : undefined,
        };
      } finally {
        client.close();
      }
    },
  },
  {
    id: "two_results_one_call",
    label: "two results for one call id reach history",
    field: "reported (agent framework handoffs)",
    unit: "client calls",
    parallel: 4,
    async trial(server, arm, seed, provider) {
      // The app answers each client tool call twice (two layers each send a result).
      const { client, sessionId } = await open(server, arm, { seed }, provider);
      try {
        await playTurn(client, "hi", {
          settleMs: 150,
          answer: () => [{ shown: true }, { shown: true, again: true }],
        });
        const events = await history(server, sessionId);
        const clientCalls = events.filter((e) => e.kind === "tool_call" && e.runOn === "client");
        const results = new Map();
        for (const e of events) {
          if (e.kind === "tool_result") {
            const id = String(e.callId);
            results.set(id, (results.get(id) ?? 0) + 1);
          }
        }
        const failed = clientCalls.filter((c) => (results.get(String(c.callId)) ?? 0) > 1).length;
        return { units: clientCalls.length, failed };
      } finally {
        client.close();
      }
    },
  },
  {
    id: "handoff_two_results",
    label: "handoff: two results for one call",
    field: "agent-framework issue 2711 (same call_id answered twice)",
    unit: "handoffs",
    parallel: 4,
    async trial(server, arm, seed, provider) {
      // The caller asks for billing: the greeter's model calls transfer_to_billing.
      const { client, sessionId } = await open(server, arm, { seed }, provider);
      try {
        await playTurn(client, "hi", { settleMs: 20 });
        await playTurn(client, "I have a question about billing", { settleMs: 300 });
        const events = await history(server, sessionId);
        const calls = events.filter(
          (e) => e.kind === "tool_call" && e.name === "transfer_to_billing",
        );
        const results = events.filter(
          (e) => e.kind === "tool_result" && e.name === "transfer_to_billing",
        );
        let failed = calls.filter(
          (c) => results.filter((r) => r.callId === c.callId).length > 1,
        ).length;
        // liveline must also have handed over (a transfer that never takes effect fails).
        const handedOff = events.some((e) => e.kind === "handoff" && e.to === "billing");
        if (arm === "liveline" && !handedOff) failed = Math.max(failed, 1);
        return {
          units: Math.max(1, calls.length),
          failed,
          note: calls.length === 0 ? "no transfer call" : undefined,
        };
      } finally {
        client.close();
      }
    },
  },
  {
    id: "same_question_again",
    label: "the same question again (the same words, a deterministic tool): ask not answered once",
    field: "issue 28: repeated_reply, a leaked go-on prompt, a 15 s stall",
    unit: "repeated asks",
    parallel: 4,
    extra: "error frames",
    control:
      "the naive relay judges no words: its failures are the regenerations and extra turn ends it forwards (several per ask), not a punished repeat",
    async trial(server, arm, seed, provider) {
      // An honest model says the same words to the same question (repeatAnswers); each ask
      // calls lookup_faq (spoken) and the app's chips (silent: on Gemini a regeneration is
      // then possible, and a guard judges). Asked three times: the second and third asks are
      // the units. Answered once: one turn_complete, the answer and what lookup_faq found each
      // said once in the turn, no error frame.
      const { client } = await open(
        server,
        arm,
        { seed, repeatAnswers: 1, calls: "*:lookup_faq,suggest_topics" },
        provider,
      );
      const line = "what are your hours?";
      try {
        let failed = 0;
        let errors = 0;
        let note;
        for (let ask = 1; ask <= 3; ask++) {
          const { frames } = await playTurn(client, line, { settleMs: 200, timeoutMs: 8000 });
          if (ask === 1) continue;
          const user = frames.find((f) => f.type === "user" && f.text === line);
          const own = frames.filter((f) => user && f.turnId === user.turnId);
          const said = textsOf(own).join("");
          const ends = turnEndsOf(own);
          const errorCodes = frames.filter((f) => f.type === "error").map((f) => f.code);
          const ok =
            user !== undefined &&
            ends.length === 1 &&
            ends[0].type === "turn_complete" &&
            (said.match(/You said: “/g) ?? []).length === 1 &&
            (said.match(/lookup_faq found/g) ?? []).length === 1 &&
            errorCodes.length === 0;
          if (errorCodes.length > 0) errors++;
          if (!ok) {
            failed++;
            note ??= `ask ${ask}: errors [${errorCodes.join(",")}], ${ends.length} ends, said: ${said.slice(0, 160)}`;
          }
        }
        return { units: 2, failed, extra: errors, note };
      } finally {
        client.close();
      }
    },
  },
  {
    id: "slow_model",
    label: "a model twice as slow as MODEL_TIMEOUT_MS: answer not delivered in its turn",
    field: "issue 28: nudged, then model_timeout; the late answer dropped",
    unit: "slow turns",
    parallel: 4,
    // The watchdog's period for this row's own wrangler dev (the default is 15 s).
    vars: { MODEL_TIMEOUT_MS: "600" },
    extra: "nudged (WATCHDOG_NUDGE)",
    control:
      "the naive relay runs liveline's own watchdog (not a guard), which since c8e49f7 waits for a slow model: the naive arm does not show the failure",
    async trial(server, arm, seed, provider) {
      // The first word 1200 ms after the line (real time: timeScale 1), then quickly. Delivered:
      // the answer in the line's turn, before its one turn_complete, and no model_timeout.
      const { client, sessionId } = await open(
        server,
        arm,
        { seed, repeatAnswers: 1, calls: "*:", timeScale: 1, latencyMs: 1200, msPerWord: 5 },
        provider,
      );
      const line = "take your time with this one";
      try {
        const { frames } = await playTurn(client, line, { settleMs: 1200, timeoutMs: 8000 });
        const user = frames.find((f) => f.type === "user" && f.text === line);
        const own = frames.filter((f) => user && f.turnId === user.turnId);
        const end = own.findIndex((f) => f.type === "turn_complete");
        const said = textsOf(end === -1 ? [] : own.slice(0, end)).join("");
        const codes = frames.filter((f) => f.type === "error").map((f) => f.code);
        const delivered =
          said.includes(`You said: “${line}”`) &&
          turnEndsOf(own).length === 1 &&
          !codes.includes("model_timeout");
        const kinds = (await timeline(server, sessionId)).map((row) => row.kind);
        return {
          units: 1,
          failed: delivered ? 0 : 1,
          extra: kinds.includes("WATCHDOG_NUDGE") ? 1 : 0,
          note: delivered
            ? undefined
            : `errors [${codes.join(",")}], said in the turn: ${said.slice(0, 80) || "nothing"}`,
        };
      } finally {
        client.close();
      }
    },
  },
  {
    id: "lines_while_opening",
    label: "three lines typed while the connection opens: a line never reaches the model",
    field: "issue 28: the lines typed over were withdrawn",
    unit: "sessions",
    parallel: 4,
    control:
      "the naive relay queues lines in liveline's own outbox (not a guard), which since c8e49f7 joins them: the naive arm does not show the failure",
    async trial(server, arm, seed, provider) {
      // The model connection takes 800 ms to be set up; the user types three lines at once.
      // Reached: the last turn's answer echoes what the model received (repeatAnswers), the
      // three lines in order as one input; the first two turns end interrupted, joined.
      const { client } = await open(
        server,
        arm,
        { seed, setupMs: 800, repeatAnswers: 1, calls: "*:" },
        provider,
      );
      const lines = [
        "My booking code is ZX41",
        "it is for two adults",
        "what is included in the fare?",
      ];
      try {
        for (const text of lines) client.send({ type: "text", text });
        const frames = [];
        for (;;) {
          const f = await client.next(8000).catch(() => null);
          if (f === null) break;
          frames.push(f);
          if (turnEndsOf(frames).length === 3) break;
        }
        const live = client.statuses.find((f) => f.state === "live");
        const users = frames.filter((f) => f.type === "user");
        const early = live !== undefined && users.every((u) => u.seq < live.seq);
        const last = users.at(-1);
        const said = textsOf(frames.filter((f) => last && f.turnId === last.turnId)).join("");
        const ends = turnEndsOf(frames).map(
          (f) => `${f.type}${f.joined === true ? "(joined)" : ""}`,
        );
        const reached = said.includes(`You said: “${lines.join("\n")}”`);
        const ok =
          early &&
          reached &&
          ends.join(",") === "interrupted(joined),interrupted(joined),turn_complete";
        return {
          units: 1,
          failed: ok ? 0 : 1,
          note: ok
            ? undefined
            : `${early ? "" : "(typed after live) "}ends ${ends.join(",")}; said: ${JSON.stringify(said.slice(0, 120))}`,
        };
      } finally {
        client.close();
      }
    },
  },
];

async function main() {
  const f = flags();
  const quick = f.has("quick");
  const trials = numFlag(f, "trials", quick ? 8 : 200);
  const seed = numFlag(f, "seed", 1);
  const only = typeof f.get("only") === "string" ? String(f.get("only")).split(",") : null;
  const scenarios = SCENARIOS.filter((s) => !only || only.includes(s.id));
  const providers =
    typeof f.get("providers") === "string"
      ? String(f.get("providers")).split(",")
      : ["gemini", "openai"];

  process.stderr.write(`repro: ${trials} trials per cell, seed ${seed}; starting wrangler dev…\n`);
  // One wrangler dev for the scenarios with the default settings; a scenario that needs other
  // Worker vars (a short MODEL_TIMEOUT_MS) gets its own, started when it comes.
  const servers = new Map();
  const serverFor = async (vars = {}) => {
    const key = JSON.stringify(vars);
    if (!servers.has(key)) servers.set(key, await startServer({ vars, main: MEASUREMENT_WORKER }));
    return servers.get(key);
  };
  await serverFor();
  const started = Date.now();
  const results = {};
  try {
    for (const sc of scenarios) {
      const server = await serverFor(sc.vars);
      results[sc.id] = {};
      for (const provider of providers.filter((p) => !sc.skip?.[p])) {
        results[sc.id][provider] = {};
        for (const arm of ["naive", "liveline"]) {
          const acc = { units: 0, failed: 0, extra: 0, notes: [] };
          let done = 0;
          await pool(
            Array.from({ length: trials }, (_, i) => seed + i),
            sc.parallel,
            async (s) => {
              let out;
              try {
                out = await sc.trial(server, arm, s, provider);
              } catch (err) {
                out = { units: 1, failed: 1, note: `seed ${s}: ${err.message}` };
              }
              acc.units += out.units;
              acc.failed += out.failed;
              acc.extra += out.extra ?? 0;
              if (out.note && acc.notes.length < 5) acc.notes.push(`seed ${s}: ${out.note}`);
              progress(`${sc.id} / ${provider} / ${arm}`, ++done, trials);
            },
          );
          results[sc.id][provider][arm] = acc;
        }
      }
    }
  } finally {
    for (const server of servers.values()) await server.stop();
  }

  const rows = scenarios.flatMap((sc) =>
    providers.map((provider) => {
      const r = results[sc.id][provider];
      if (!r) return [sc.label, provider, "—", "—", `skipped: ${sc.skip[provider]}`];
      return [
        sc.label,
        provider,
        pct(r.naive.failed, r.naive.units),
        pct(r.liveline.failed, r.liveline.units),
        sc.field,
      ];
    }),
  );
  const out = table(
    ["scenario", "provider", "naive relay (control)", "liveline", "figure reported in the field"],
    rows,
  );
  const secs = ((Date.now() - started) / 1000).toFixed(0);
  console.log(
    `\nliveline repro — ${trials} trials per cell, seed ${seed} (trial i uses simulator seed ${seed}+i), ${secs} s\n`,
  );
  console.log(out);
  for (const sc of scenarios.filter((x) => x.control)) {
    console.log(`${sc.id}, about the control: ${sc.control}`);
  }
  for (const sc of scenarios.filter((x) => x.extra)) {
    for (const [provider, r] of Object.entries(results[sc.id])) {
      console.log(
        `${sc.id} (${provider}), ${sc.extra}: naive relay ${pct(r.naive.extra, r.naive.units)}, liveline ${pct(r.liveline.extra, r.liveline.units)}`,
      );
    }
  }
  const notes = scenarios.flatMap((sc) =>
    Object.entries(results[sc.id]).flatMap(([provider, r]) =>
      ["naive", "liveline"].flatMap((arm) =>
        r[arm].notes.map((n) => `  ${sc.id} / ${provider} / ${arm}: ${n}`),
      ),
    ),
  );
  if (notes.length > 0) console.log(`\nfirst failures:\n${notes.join("\n")}`);
  const path = writeJson(
    "repro.json",
    {
      trials,
      seed,
      seconds: Number(secs),
      machine: await machine(),
      scenarios: scenarios.map((sc) => ({
        id: sc.id,
        scenario: sc.label,
        unit: sc.unit,
        field: sc.field,
        parallel: sc.parallel,
        ...(sc.vars ? { vars: sc.vars } : {}),
        providers: results[sc.id],
        skipped: sc.skip ?? {},
      })),
    },
    { quick },
  );
  console.log(`\nJSON: ${path}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
