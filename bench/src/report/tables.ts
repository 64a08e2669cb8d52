import type { Figure } from "../measure/stats.js";
import type { Ratio, Target } from "./figures.js";

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
