/**
 * A CPU profile of the worker under `wrangler dev`, through its inspector (Chrome DevTools
 * protocol, the `Profiler` domain): start, run some load, stop, and sum the self time per
 * function. What the bench prints as "where the time goes", measured rather than guessed.
 */

/** Starts profiling; resolves to `stop()`, which returns the profile summarised. */
export async function startProfile(inspectorPort, { intervalUs = 100 } = {}) {
  // The inspector lists its endpoint (host and path) at /json.
  const targets = await (await fetch(`http://localhost:${inspectorPort}/json`)).json();
  // The inspector proxy wants an Origin (undici's WebSocket takes headers in its options).
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl, {
    headers: { Origin: `http://localhost:${inspectorPort}` },
  });
  await new Promise((ok, fail) => {
    ws.addEventListener("open", ok, { once: true });
    ws.addEventListener("error", () => fail(new Error("cannot reach the inspector")), {
      once: true,
    });
  });
  let id = 0;
  const pending = new Map();
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(String(e.data));
    if (m.id !== undefined && pending.has(m.id)) {
      pending.get(m.id)(m);
      pending.delete(m.id);
    }
  });
  const call = (method, params = {}) =>
    new Promise((ok, fail) => {
      const n = ++id;
      pending.set(n, (m) => (m.error ? fail(new Error(m.error.message)) : ok(m.result)));
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  await call("Profiler.enable");
  await call("Profiler.setSamplingInterval", { interval: intervalUs });
  await call("Profiler.start");
  return async function stop() {
    const { profile } = await call("Profiler.stop");
    ws.close();
    return summarise(profile);
  };
}

/** Self time per function (ms and share), the top `limit`, from a `Profiler.Profile`. */
export function summarise(profile, limit = 15) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n);
  const nameOf = (n) => {
    const f = n.callFrame;
    const file = f.url ? f.url.split("/").slice(-1)[0] : "";
    return `${f.functionName || "(anonymous)"} ${file}${f.url ? `:${f.lineNumber + 1}` : ""}`.trim();
  };
  const self = new Map();
  const deltas = profile.timeDeltas ?? [];
  let total = 0;
  profile.samples.forEach((nodeId, i) => {
    const dt = (deltas[i + 1] ?? deltas[i] ?? 0) / 1000;
    const node = byId.get(nodeId);
    let key = nameOf(node);
    // A built-in (no script of its own: send, exec…) is named with the function calling it.
    if (!node.callFrame.url && parentOf.has(node.id) && !key.startsWith("(")) {
      key = `${key} ← ${nameOf(parentOf.get(node.id))}`;
    }
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  const idle = [...self].filter(([k]) => k.startsWith("(idle)")).reduce((a, [, v]) => a + v, 0);
  const busy = total - idle;
  const top = [...self]
    .filter(([k]) => !k.startsWith("(idle)"))
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([fn, ms]) => ({ fn, ms, share: busy > 0 ? ms / busy : 0 }));
  return { totalMs: total, busyMs: busy, top };
}
