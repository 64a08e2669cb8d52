import type { Figure, LatencyFigure, RateFigure } from "./stats.js";
import { round } from "./stats.js";

export interface Ratio {
  name: string;
  value: number;
  how: string;
}

export interface Target {
  target: string;
  measured: string;
  met: boolean | null;
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

export function ratios(figures: Figure[]): Ratio[] {
  const out: Ratio[] = [];
  const floor = p50(figures, "floor_commit");
  const toListener = p50(figures, "floor_notify.commit_to_listener");
  const boss = p50(figures, "pgboss_roundtrip");
  const bossRate = rateOf(figures, "pgboss_roundtrip.throughput");
  const push = (name: string, a: number | undefined, b: number | undefined, how: string) => {
    if (a !== undefined && b !== undefined && b > 0) out.push({ name, value: round(a / b, 2), how });
  };
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
  return out;
}

/** The issue's targets, each with its measured value; met is null when not measured in this run. */
export function targets(figures: Figure[], ratioList: Ratio[]): Target[] {
  const out: Target[] = [];
  const atMost = (label: string, v: number | undefined, limit: number, unit = "ms") =>
    out.push({
      target: `${label} ≤ ${limit} ${unit}`,
      measured: v === undefined ? "not measured" : `${v} ${unit}`,
      met: v === undefined ? null : v <= limit,
    });
  atMost("turn_text p50", p50(figures, "turn_text"), 3);
  atMost("tool_dispatch p50", p50(figures, "tool_dispatch"), 1);
  atMost("turn_one_tool p50 (incl. 5 ms window)", p50(figures, "turn_one_tool"), 9);
  atMost("emit p50", p50(figures, "emit"), 1);
  const tput = rateOf(figures, "tool_throughput");
  out.push({
    target: "tool_throughput ≥ 3000 calls/s",
    measured: tput === undefined ? "not measured" : `${tput} calls/s`,
    met: tput === undefined ? null : tput >= 3000,
  });
  const r = (name: string) => ratioList.find((x) => x.name === name)?.value;
  const vsBossRate = r("tool_throughput ÷ pg-boss");
  out.push({
    target: "throughput ≥ 3 × pgboss_roundtrip",
    measured: vsBossRate === undefined ? "not measured" : `${vsBossRate} ×`,
    met: vsBossRate === undefined ? null : vsBossRate >= 3,
  });
  const vsBoss = r("call_roundtrip ÷ pg-boss");
  out.push({
    target: "latency ≤ ⅓ of pgboss_roundtrip (tool call round trip)",
    measured: vsBoss === undefined ? "not measured" : `${vsBoss} ×`,
    met: vsBoss === undefined ? null : vsBoss <= 1 / 3,
  });
  const steps = ratioList.filter(
    (x) => x.name.startsWith("step ") || ["emit ÷ floor", "tool_dispatch ÷ floor"].includes(x.name),
  );
  if (steps.length > 0) {
    const worst = steps.reduce((a, b) => (b.value > a.value ? b : a));
    const over = steps.filter((s) => s.value > 3).length;
    out.push({
      target: "no step > 3 × its floor",
      measured: `worst ${worst.value} × (${worst.name}); ${over} of ${steps.length} steps over 3 ×`,
      met: over === 0,
    });
  } else out.push({ target: "no step > 3 × its floor", measured: "not measured", met: null });
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
  return [
    "| target | measured | met |",
    "|--------|----------|-----|",
    ...list.map((t) => `| ${t.target} | ${t.measured} | ${t.met === null ? "—" : t.met ? "met" : "MISSED"} |`),
  ].join("\n");
}
