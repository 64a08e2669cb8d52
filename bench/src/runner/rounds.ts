import { type Figure, round } from "../measure/stats.js";
import type { Ratio } from "../report/figures.js";

/**
 * `--rounds N`: the chosen scenarios run N times, interleaved (all of them once, then all again),
 * so that a ratio's two sides are measured minutes apart in every round, and a slow stretch of a
 * shared machine moves one round rather than the result. Each ratio is the median of its rounds'
 * values; each scenario's table shows the round whose headline figure is its median.
 */

/** One round's figures of one scenario. */
export type ScenarioRounds = Figure[][];

/** What a scenario is ranked by across rounds: its first figure's rate, p50 or value. */
function headline(figures: Figure[]): number | undefined {
  const f = figures.find((x) => x.kind !== "skipped");
  if (!f) return undefined;
  if (f.kind === "rate") return f.rate;
  if (f.kind === "latency") return f.n > 0 ? f.p50 : undefined;
  if (f.kind === "value") return f.value;
  return undefined;
}

/** The median (for an even count, the mean of the two middle values: neither side favoured). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!;
}

/**
 * The figures of the round whose headline is the median of the scenario's rounds: one coherent
 * run of the scenario (its latencies and rates measured together), not a mix of rounds.
 */
export function medianRound(rounds: ScenarioRounds): Figure[] {
  const ranked = rounds
    .map((figures) => ({ figures, key: headline(figures) }))
    .filter((r): r is { figures: Figure[]; key: number } => r.key !== undefined)
    .sort((a, b) => a.key - b.key);
  if (ranked.length === 0) return rounds[0] ?? [];
  return ranked[Math.floor((ranked.length - 1) / 2)]!.figures;
}

/**
 * Each ratio as the median of the rounds that measured it; its `how` says so and lists every
 * round's value, in round order.
 */
export function medianRatios(perRound: Ratio[][]): Ratio[] {
  if (perRound.length === 1) return perRound[0]!;
  const names: string[] = [];
  for (const list of perRound) for (const r of list) if (!names.includes(r.name)) names.push(r.name);
  return names.map((name) => {
    const found = perRound.flatMap((list) => list.filter((r) => r.name === name));
    const values = found.map((r) => r.value);
    return {
      name,
      value: round(median(values), 2),
      how:
        values.length === 1
          ? `${found[0]!.how}; from 1 of ${perRound.length} rounds`
          : `${found[0]!.how}; median of ${values.length} rounds (${values.join(", ")})`,
    };
  });
}
