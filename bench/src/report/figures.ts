import type { Figure, LatencyFigure, RateFigure } from "../measure/stats.js";
import { round } from "../measure/stats.js";

export interface Ratio {
  name: string;
  value: number;
  how: string;
}

export interface Target {
  target: string;
  measured: string;
  met: boolean | null;
  /** The same target measured on the bare stack (floor_stack), when the run has it. */
  stack?: { measured: string; met: boolean | null };
  /**
   * The same target measured on the bare stack writing Brain's journal (floor_stack_journal), when
   * the run has it: a target missed there is stopped by the journal's statements, whatever the
   * rest of Brain costs.
   */
  journal?: { measured: string; met: boolean | null };
}

export function find(figures: Figure[], name: string): Figure | undefined {
  return figures.find((f) => f.name === name);
}
export function p50(figures: Figure[], name: string): number | undefined {
  const f = find(figures, name);
  return f?.kind === "latency" && f.n > 0 ? (f as LatencyFigure).p50 : undefined;
}
export function rateOf(figures: Figure[], name: string): number | undefined {
  const f = find(figures, name);
  return f?.kind === "rate" ? (f as RateFigure).rate : undefined;
}

export function figureValue(figures: Figure[], name: string): number | undefined {
  const f = find(figures, name);
  return f?.kind === "value" ? f.value : undefined;
}

/** A list of ratios, and the push that adds `a ÷ b` when both were measured. */
export function ratioList() {
  const out: Ratio[] = [];
  const push = (name: string, a: number | undefined, b: number | undefined, how: string) => {
    if (a !== undefined && b !== undefined && b > 0) out.push({ name, value: round(a / b, 2), how });
  };
  return { out, push };
}

export function journalSizes(figures: Figure[]): { size: number; p50: number }[] {
  return figures
    .filter((f): f is LatencyFigure => f.kind === "latency" && /^journal_size\.records_\d+$/.test(f.name) && f.n > 0)
    .map((f) => ({ size: Number(f.name.split("_").pop()), p50: f.p50 }))
    .sort((a, b) => a.size - b.size);
}

/** Milliseconds of CPU (server, host and Postgres together) per call under a throughput figure. */
export function cpuPerCall(figures: Figure[], name: string): number | undefined {
  const f = find(figures, name);
  if (f?.kind !== "rate" || !f.cpu || f.rate <= 0) return undefined;
  const cores = (f.cpu.server ?? 0) + (f.cpu.host ?? 0) + (f.cpu.postgres ?? 0);
  return round((cores / f.rate) * 1000, 3);
}

export function rounded(v: number | undefined): number | undefined {
  return v === undefined ? undefined : round(v, 2);
}
