/** The figures a scenario reports. Every latency is in milliseconds unless `unit` says otherwise. */

/** Cores used by each process while the figure was measured (CPU seconds ÷ wall seconds). */
export type CpuUse = Record<string, number>;

interface FigureBase {
  name: string;
  /** Free text: how the figure was obtained, caveats, anomalies. */
  note?: string;
  cpu?: CpuUse;
}

export interface LatencyFigure extends FigureBase {
  kind: "latency";
  unit: string;
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  min: number;
}

export interface RateFigure extends FigureBase {
  kind: "rate";
  /** e.g. "calls/s". */
  unit: string;
  /** How many events the rate counts. */
  n: number;
  rate: number;
  /** The measured window. */
  seconds: number;
}

export interface ValueFigure extends FigureBase {
  kind: "value";
  unit: string;
  /** How many things the value is averaged over. */
  n: number;
  value: number;
}

export interface SkippedFigure extends FigureBase {
  kind: "skipped";
  reason: string;
}

export type Figure = LatencyFigure | RateFigure | ValueFigure | SkippedFigure;

/** Nearest-rank percentile of sorted samples (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function latency(name: string, samples: readonly number[], extra: Partial<FigureBase> = {}): LatencyFigure {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    name,
    kind: "latency",
    unit: "ms",
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1] ?? Number.NaN),
    min: round(sorted[0] ?? Number.NaN),
    mean: round(sorted.length === 0 ? Number.NaN : sum / sorted.length),
    ...extra,
  };
}

export function rate(
  name: string,
  unit: string,
  n: number,
  seconds: number,
  extra: Partial<FigureBase> = {},
): RateFigure {
  return { name, kind: "rate", unit, n, rate: round(n / seconds, 1), seconds: round(seconds, 3), ...extra };
}

export function value(name: string, unit: string, n: number, v: number, extra: Partial<FigureBase> = {}): ValueFigure {
  return { name, kind: "value", unit, n, value: round(v, 2), ...extra };
}

export function skipped(name: string, reason: string): SkippedFigure {
  return { name, kind: "skipped", reason };
}

/** Rounds to `digits` decimals (3 by default: microseconds for millisecond figures). */
export function round(x: number, digits = 3): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
