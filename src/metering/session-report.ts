/**
 * What a session cost and how fast it answered, turn by turn and in total: the usage its
 * model reported (priced by the model of each turn) beside the latencies its timeline shows.
 */
import type { UsageTotals } from "../vocabulary/model.js";
import { type Cost, costOf, emptyUsage, sumCosts } from "./cost.js";
import {
  type LatencySummary,
  summarise,
  type ToolLatency,
  type TraceRowAt,
  turnLatencies,
} from "./latency.js";
import type { ModelPrice } from "./prices.js";

export interface UsageRowOf {
  /** null: responses before the first turn (a greeting the model gave on its own). */
  turnId: string | null;
  /** The model that reported it ('' when not kept: the session's current model). */
  model: string;
  usage: UsageTotals;
}

export interface TurnReport {
  /** null: what the model used before the first turn. */
  turnId: string | null;
  /** The turn's usage as the model reported it (null: it reported none). */
  usage: UsageTotals | null;
  cost: Cost;
  firstByteMs: number | null;
  turnMs: number | null;
  tools: ToolLatency[];
}

export interface SessionReport {
  cost: Cost;
  latency: LatencySummary;
  turns: TurnReport[];
}

export function sessionReport(
  usageRows: readonly UsageRowOf[],
  trace: readonly TraceRowAt[],
  currentModel: string,
  priceOf: (model: string) => ModelPrice | null,
): SessionReport {
  const usageByTurn = new Map(usageRows.map((row) => [row.turnId, row]));
  const latencies = turnLatencies(trace);
  const turns: TurnReport[] = [];
  const before = usageByTurn.get(null);
  if (before !== undefined) turns.push(report(null, before, null));
  const seen = new Set<string>();
  for (const latency of latencies) {
    seen.add(latency.turnId);
    turns.push(report(latency.turnId, usageByTurn.get(latency.turnId), latency));
  }
  // Usage of turns whose rows the timeline no longer holds (it keeps its newest rows).
  for (const row of usageRows)
    if (row.turnId !== null && !seen.has(row.turnId)) turns.push(report(row.turnId, row, null));
  const none = costOf(emptyUsage(), priceOf(currentModel));
  return {
    cost: sumCosts(
      turns.map((t) => t.cost),
      none,
    ),
    latency: summarise(latencies),
    turns,
  };

  function report(
    turnId: string | null,
    row: UsageRowOf | undefined,
    latency: ReturnType<typeof turnLatencies>[number] | null,
  ): TurnReport {
    const model = row === undefined || row.model === "" ? currentModel : row.model;
    const usage = row?.usage ?? null;
    return {
      turnId,
      usage,
      cost: costOf(usage ?? emptyUsage(), priceOf(model)),
      firstByteMs: latency?.firstByteMs ?? null,
      turnMs: latency?.turnMs ?? null,
      tools: latency?.tools ?? [],
    };
  }
}
