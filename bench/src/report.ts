import type { Figure, LatencyFigure, RateFigure } from "./stats.js";
import { round, value } from "./stats.js";

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

function find(figures: Figure[], name: string): Figure | undefined {
  return figures.find((f) => f.name === name);
}
function p50(figures: Figure[], name: string): number | undefined {
  const f = find(figures, name);
  return f?.kind === "latency" && f.n > 0 ? (f as LatencyFigure).p50 : undefined;
}
function rateOf(figures: Figure[], name: string): number | undefined {
  const f = find(figures, name);
  return f?.kind === "rate" ? (f as RateFigure).rate : undefined;
}

function figureValue(figures: Figure[], name: string): number | undefined {
  const f = find(figures, name);
  return f?.kind === "value" ? f.value : undefined;
}

/** Each step of a turn that spans a commit (a segment), against one floor commit. */
function stepRatios(figures: Figure[], floor: number): Ratio[] {
  const out: Ratio[] = [];
  for (const f of figures) {
    if (f.kind !== "latency" || !f.name.includes(" · ") || f.n === 0) continue;
    if (f.name.includes("(wake)") || f.name.includes("(same commit)")) continue;
    out.push({ name: `step ${f.name}`, value: round(f.p50 / floor, 2), how: "segment p50 ÷ floor_commit p50" });
  }
  return out;
}

/** A list of ratios, and the push that adds `a ÷ b` when both were measured. */
function ratioList() {
  const out: Ratio[] = [];
  const push = (name: string, a: number | undefined, b: number | undefined, how: string) => {
    if (a !== undefined && b !== undefined && b > 0) out.push({ name, value: round(a / b, 2), how });
  };
  return { out, push };
}

export function ratios(figures: Figure[]): Ratio[] {
  const { out, push } = ratioList();
  const floor = p50(figures, "floor_commit");
  const toListener = p50(figures, "floor_notify.commit_to_listener");
  const boss = p50(figures, "pgboss_roundtrip");
  const bossRate = rateOf(figures, "pgboss_roundtrip.throughput");
  if (floor !== undefined) {
    const textCommits = figureValue(figures, "turn_text.commits");
    const toolCommits = figureValue(figures, "turn_one_tool.commits");
    if (textCommits !== undefined) {
      push(
        "turn_text ÷ floor",
        p50(figures, "turn_text"),
        textCommits * floor,
        `p50 ÷ (${textCommits} commits/turn × floor_commit p50)`,
      );
    }
    if (toolCommits !== undefined) {
      push(
        "turn_one_tool.rest ÷ floor",
        p50(figures, "turn_one_tool.rest"),
        toolCommits * floor,
        `p50 ÷ (${toolCommits} commits/turn × floor_commit p50)`,
      );
    }
    push("emit ÷ floor", p50(figures, "emit"), floor, "p50 ÷ floor_commit p50");
    push(
      "tool_dispatch ÷ floor",
      p50(figures, "tool_dispatch"),
      toListener,
      "p50 ÷ floor_notify.commit_to_listener p50",
    );
    push(
      "tool_throughput ÷ notifying-commit cap",
      rateOf(figures, "tool_throughput"),
      rateOf(figures, "floor_commit.notify_c8"),
      "calls/s ÷ floor_commit.notify_c8 commits/s",
    );
    push(
      "tool_throughput ÷ plain-commit rate",
      rateOf(figures, "tool_throughput"),
      rateOf(figures, "floor_commit.plain_c8"),
      "calls/s ÷ floor_commit.plain_c8 commits/s",
    );
    out.push(...stepRatios(figures, floor));
  }
  push("call_roundtrip ÷ pg-boss", p50(figures, "turn_one_tool.call_roundtrip"), boss, "p50 ÷ pgboss_roundtrip p50");
  push("turn_one_tool ÷ pg-boss", p50(figures, "turn_one_tool"), boss, "p50 ÷ pgboss_roundtrip p50");
  push("tool_throughput ÷ pg-boss", rateOf(figures, "tool_throughput"), bossRate, "calls/s ÷ pg-boss calls/s");
  const graphile = p50(figures, "graphile_roundtrip");
  push(
    "call_roundtrip ÷ graphile-worker",
    p50(figures, "turn_one_tool.call_roundtrip"),
    graphile,
    "p50 ÷ graphile_roundtrip p50",
  );
  push(
    "tool_throughput ÷ graphile-worker",
    rateOf(figures, "tool_throughput"),
    rateOf(figures, "graphile_roundtrip.throughput"),
    "calls/s ÷ graphile_roundtrip.throughput calls/s",
  );
  out.push(...scalingRatios(figures));
  push(
    "two_servers ÷ tool_throughput",
    rateOf(figures, "two_servers"),
    rateOf(figures, "tool_throughput") ?? rateOf(figures, "tool_scaling.sessions_64"),
    "aggregate calls/s of 2 servers × 32 sessions ÷ one server × 64 sessions",
  );
  push(
    "takeover ÷ empty start",
    figureValue(figures, "takeover"),
    figureValue(figures, "takeover.empty_start"),
    "ms until a new server owns a stopped one's sessions (marked parked on its way out) ÷ its start with none",
  );
  push(
    "takeover.killed ÷ empty start",
    figureValue(figures, "takeover.killed"),
    figureValue(figures, "takeover.empty_start"),
    "ms until a new server has resumed a killed one's sessions (claim, reads, replay) ÷ its start with none",
  );
  push(
    "parked wake turn ÷ resident turn",
    p50(figures, "parked_memory.wake_turn"),
    p50(figures, "parked_memory.resident_turn"),
    "p50 of a parked session's first turn (rebuilt from the journal) ÷ its next turn's",
  );
  const journal = journalSizes(figures);
  if (journal.length >= 2) {
    const [first, last] = [journal[0]!, journal[journal.length - 1]!];
    push(
      "journal_size largest ÷ smallest",
      last.p50,
      first.p50,
      `text turn p50 at ${last.size} records ÷ at ${first.size} records`,
    );
  }
  const perCall = cpuPerCall(figures, "tool_throughput");
  if (perCall !== undefined) {
    out.push({
      name: "CPU per tool call (ms)",
      value: perCall,
      how: "(server + host + postgres cores) ÷ tool_throughput calls/s",
    });
  }
  out.push(...stackRatios(figures), ...journalRatios(figures));
  return out;
}

/**
 * Brain's own journal commit alone (floor_journal) against the physical floor, and the sequential
 * paths against it: of each path's distance from floor_commit, how much is the journal's statement
 * and how much the processes around it.
 */
function journalRatios(figures: Figure[]): Ratio[] {
  const { out, push } = ratioList();
  const floor = p50(figures, "floor_commit");
  const three = p50(figures, "floor_journal.append_3");
  const emitAlone = p50(figures, "floor_journal.emit");
  push(
    "floor_journal ÷ floor_commit",
    p50(figures, "floor_journal.append"),
    floor,
    "floor_journal.append p50 ÷ floor_commit p50",
  );
  push("floor_journal.emit ÷ floor_commit", emitAlone, floor, "p50 ÷ floor_commit p50");
  const textCommits = figureValue(figures, "turn_text.commits");
  if (textCommits !== undefined && three !== undefined) {
    push(
      "turn_text ÷ floor_journal",
      p50(figures, "turn_text"),
      textCommits * three,
      `p50 ÷ (${textCommits} commits/turn × floor_journal.append_3 p50)`,
    );
  }
  push("emit ÷ floor_journal", p50(figures, "emit"), emitAlone, "p50 ÷ floor_journal.emit p50 (the same commit alone)");
  return out;
}

/**
 * Brain against the bare stack (floor_stack), what Brain's own code costs on each path, and its
 * throughput against the stack writing its journal (floor_stack_journal): what the rest costs.
 */
function stackRatios(figures: Figure[]): Ratio[] {
  const { out, push } = ratioList();
  push("turn_text ÷ floor_stack", p50(figures, "turn_text"), p50(figures, "floor_stack.turn_text"), "p50 ÷ p50");
  push("emit ÷ floor_stack", p50(figures, "emit"), p50(figures, "floor_stack.emit"), "p50 ÷ p50");
  push(
    "tool_dispatch.to_host_socket ÷ floor_stack",
    p50(figures, "tool_dispatch.to_host_socket"),
    p50(figures, "floor_stack.dispatch"),
    "p50 ÷ floor_stack.dispatch p50 (the same path: intent committed → invoke frame on the host's socket)",
  );
  push(
    "call_roundtrip ÷ floor_stack",
    p50(figures, "turn_one_tool.call_roundtrip"),
    p50(figures, "floor_stack.call_roundtrip"),
    "p50 ÷ p50",
  );
  for (const [stack, label, whose] of [
    ["floor_stack", "bare stack", "the bare stack's"],
    ["floor_stack_journal", "Brain's journal on the stack", "its journal's alone on the stack"],
  ] as const) {
    push(
      `${stack} ÷ tool_throughput`,
      rateOf(figures, `${stack}.throughput`),
      rateOf(figures, "tool_throughput"),
      `${whose} calls/s ÷ Brain's, same load`,
    );
    const stackCpu = cpuPerCall(figures, `${stack}.throughput`);
    if (stackCpu === undefined) continue;
    out.push({
      name: `CPU per call, ${label} (ms)`,
      value: stackCpu,
      how: `(server + host + postgres cores) ÷ ${stack}.throughput calls/s`,
    });
    push(
      `CPU per tool call ÷ ${stack}`,
      cpuPerCall(figures, "tool_throughput"),
      stackCpu,
      `Brain's CPU per call ÷ ${whose}`,
    );
  }
  return out;
}

/** The stacks whose figures the targets table also judges: the bare one, and it writing Brain's journal. */
export type StackName = "floor_stack" | "floor_stack_journal";

/** Brain's figures that each stack scenario also measures, by the stack's path. */
const STACK_PATHS = {
  turn_text: "turn_text",
  emit: "emit",
  dispatch: "tool_dispatch",
  throughput: "tool_throughput",
  call_roundtrip: "turn_one_tool.call_roundtrip",
};
const STACK_AS: Record<StackName, Record<string, string>> = {
  floor_stack: STACK_PATHS,
  // The stacks time a dispatch from the intents' submit, Brain from their row's insert: a longer
  // span, so a floor that judged Brain's dispatch target by it would claim more than it showed.
  floor_stack_journal: Object.fromEntries(Object.entries(STACK_PATHS).filter(([path]) => path !== "dispatch")),
};

/**
 * The run's figures as if a stack were Brain: the baselines, and the stack's figures under Brain's
 * names (its text turn is two commits, like Brain's). Undefined when that stack did not run.
 */
export function asStack(figures: Figure[], stack: StackName = "floor_stack"): Figure[] | undefined {
  const renamed = figures.flatMap((f) => {
    const dot = f.name.lastIndexOf(".");
    const name = f.name.slice(0, dot) === stack ? STACK_AS[stack][f.name.slice(dot + 1)] : undefined;
    return name ? [{ ...f, name }] : [];
  });
  if (renamed.length === 0) return undefined;
  const baselines = figures.filter((f) => /^(floor_commit|floor_notify|pgboss_|graphile_)/.test(f.name));
  return [...baselines, ...renamed, value("turn_text.commits", "commits/turn", 1, 2)];
}

/** Each tool_scaling level's calls/s against the lowest level's. */
function scalingRatios(figures: Figure[]): Ratio[] {
  const levels = figures
    .filter((f): f is RateFigure => f.kind === "rate" && /^tool_scaling\.sessions_\d+$/.test(f.name))
    .map((f) => ({ sessions: Number(f.name.split("_").pop()), rate: f.rate }))
    .sort((a, b) => a.sessions - b.sessions);
  const base = levels[0];
  if (!base || base.rate <= 0) return [];
  return levels.slice(1).map((l) => ({
    name: `tool_scaling ${l.sessions} ÷ ${base.sessions} sessions`,
    value: round(l.rate / base.rate, 2),
    how: `calls/s at ${l.sessions} concurrent sessions ÷ at ${base.sessions}`,
  }));
}

/** journal_size's text-turn p50 by journal size, smallest first. */
function journalSizes(figures: Figure[]): { size: number; p50: number }[] {
  return figures
    .filter((f): f is LatencyFigure => f.kind === "latency" && /^journal_size\.records_\d+$/.test(f.name) && f.n > 0)
    .map((f) => ({ size: Number(f.name.split("_").pop()), p50: f.p50 }))
    .sort((a, b) => a.size - b.size);
}

/** Milliseconds of CPU (server, host and Postgres together) per call under a throughput figure. */
function cpuPerCall(figures: Figure[], name: string): number | undefined {
  const f = find(figures, name);
  if (f?.kind !== "rate" || !f.cpu || f.rate <= 0) return undefined;
  const cores = (f.cpu.server ?? 0) + (f.cpu.host ?? 0) + (f.cpu.postgres ?? 0);
  return round((cores / f.rate) * 1000, 3);
}

/**
 * The hot path's targets, each with its measured value (met is null when not
 * measured in this run) and, when floor_stack ran, the same target measured on the bare stack: a
 * target the bare stack misses too is stopped by the stack and the machine, not by Brain's code.
 */
export function targets(ratioList: Ratio[], figures: Figure[] = []): Target[] {
  const judged = (stack: StackName) => {
    const stackFigures = asStack(figures, stack);
    if (!stackFigures) return new Map<string, Target>();
    return new Map(brainTargets(ratios(stackFigures), stackFigures).map((t) => [t.target, t]));
  };
  const bare = judged("floor_stack");
  const journal = judged("floor_stack_journal");
  return brainTargets(ratioList, figures).map((t) => {
    const out: Target = { ...t };
    const s = bare.get(t.target);
    if (s && s.met !== null) out.stack = { measured: s.measured, met: s.met };
    const j = journal.get(t.target);
    if (j && j.met !== null) out.journal = { measured: j.measured, met: j.met };
    return out;
  });
}

function brainTargets(ratioList: Ratio[], figures: Figure[]): Target[] {
  const out: Target[] = [];
  const r = (name: string) => ratioList.find((x) => x.name === name)?.value;
  const check = (target: string, v: number | undefined, ok: (v: number) => boolean, unit = "×") =>
    out.push({
      target,
      measured: v === undefined ? "not measured" : `${v} ${unit}`,
      met: v === undefined ? null : ok(v),
    });
  check("tool_throughput ≥ 5 × pgboss_roundtrip.throughput", r("tool_throughput ÷ pg-boss"), (v) => v >= 5);
  check("tool_throughput ≥ 5 × graphile_roundtrip.throughput", r("tool_throughput ÷ graphile-worker"), (v) => v >= 5);
  check("tool_throughput ≥ 1 × floor_commit.notify_c8", r("tool_throughput ÷ notifying-commit cap"), (v) => v >= 1);
  check("CPU per tool call ≤ 0.5 ms", r("CPU per tool call (ms)"), (v) => v <= 0.5, "ms");
  check("turn_text p50 ≤ 2 × (commits × floor_commit)", r("turn_text ÷ floor"), (v) => v <= 2);
  check("emit p50 ≤ 1.5 × floor_commit", r("emit ÷ floor"), (v) => v <= 1.5);
  check("tool_dispatch p50 ≤ 1.5 × floor_notify.commit_to_listener", r("tool_dispatch ÷ floor"), (v) => v <= 1.5);
  check("call round trip ≤ ¼ of pgboss_roundtrip", r("call_roundtrip ÷ pg-boss"), (v) => v <= 0.25);
  check("call round trip ≤ ¼ of graphile_roundtrip", r("call_roundtrip ÷ graphile-worker"), (v) => v <= 0.25);
  check(
    "text turn p50 flat in journal size (largest ÷ smallest ≤ 1.2)",
    r("journal_size largest ÷ smallest"),
    (v) => v <= 1.2,
  );
  check(
    "server memory per idle session (VmRSS) ≤ 8 KiB",
    rounded(figureValue(figures, "session_memory.rss")),
    (v) => v <= 8,
    "KiB",
  );
  check(
    "server memory per idle session (V8 heap) ≤ 8 KiB",
    rounded(figureValue(figures, "session_memory.heap")),
    (v) => v <= 8,
    "KiB",
  );
  // The same bound on a fresh server's first sessions, which carry what the process grows once
  // (not a cost of each further session, but what a small deployment sees).
  check(
    "server memory per idle session, a fresh server's first ones with its one-off growth (VmRSS) ≤ 8 KiB",
    rounded(figureValue(figures, "session_memory.first_rss")),
    (v) => v <= 8,
    "KiB",
  );
  check(
    "server memory per parked session with history (V8 heap) ≤ 8 KiB",
    rounded(figureValue(figures, "parked_memory.parked_heap")),
    (v) => v <= 8,
    "KiB",
  );
  return out;
}

function fmt(x: number | undefined): string {
  if (x === undefined || Number.isNaN(x)) return "";
  if (Math.abs(x) >= 100) return x.toFixed(0);
  if (Math.abs(x) >= 10) return x.toFixed(1);
  return x.toFixed(3);
}

function cpuText(f: Figure): string {
  if (!f.cpu) return "";
  return Object.entries(f.cpu)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(", ");
}

/** The table: one row per figure. */
export function table(figures: Figure[]): string {
  const rows: string[][] = [["figure", "unit", "n", "p50", "p90", "p99", "max", "rate/value", "cores used"]];
  for (const f of figures) {
    switch (f.kind) {
      case "latency":
        rows.push([f.name, f.unit, String(f.n), fmt(f.p50), fmt(f.p90), fmt(f.p99), fmt(f.max), "", cpuText(f)]);
        break;
      case "rate":
        rows.push([f.name, f.unit, String(f.n), "", "", "", "", fmt(f.rate), cpuText(f)]);
        break;
      case "value":
        rows.push([f.name, f.unit, String(f.n), "", "", "", "", fmt(f.value), cpuText(f)]);
        break;
      case "skipped":
        rows.push([f.name, "", "", "", "", "", "", `skipped: ${f.reason}`, ""]);
        break;
    }
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    `| ${r.map((c, i) => (i >= 2 && i <= 7 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(" | ")} |`;
  const sep = `|${widths.map((w, i) => (i >= 2 && i <= 7 ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`;
  return [line(rows[0]!), sep, ...rows.slice(1).map(line)].join("\n");
}

export function ratioTable(list: Ratio[]): string {
  const w = Math.max(...list.map((r) => r.name.length), 5);
  return [
    `| ${"ratio".padEnd(w)} | value | how |`,
    `|${"-".repeat(w + 2)}|------:|-----|`,
    ...list.map((r) => `| ${r.name.padEnd(w)} | ${r.value.toFixed(2).padStart(5)} | ${r.how} |`),
  ].join("\n");
}

export function targetTable(list: Target[]): string {
  const verdict = (met: boolean | null | undefined) =>
    met === null || met === undefined ? "—" : met ? "met" : "MISSED";
  return [
    "| target | measured | met | bare stack (floor_stack) | the stack with Brain's journal (floor_stack_journal) |",
    "|--------|----------|-----|--------------------------|------------------------------------------------------|",
    ...list.map(
      (t) =>
        `| ${t.target} | ${t.measured} | ${verdict(t.met)} | ${t.stack ? `${t.stack.measured}, ${verdict(t.stack.met)}` : "—"} | ${t.journal ? `${t.journal.measured}, ${verdict(t.journal.met)}` : "—"} |`,
    ),
  ].join("\n");
}

function rounded(v: number | undefined): number | undefined {
  return v === undefined ? undefined : round(v, 2);
}
