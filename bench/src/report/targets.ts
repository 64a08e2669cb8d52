import type { Figure } from "../measure/stats.js";
import { figureValue, type Ratio, rounded, type Target } from "./figures.js";
import { asStack, ratios, type StackName } from "./ratios.js";

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
  check("tool_throughput ≥ 1 × dbos_roundtrip.throughput", r("tool_throughput ÷ DBOS"), (v) => v >= 1);
  check("call round trip ≤ 1 × dbos_roundtrip", r("call_roundtrip ÷ DBOS"), (v) => v <= 1);
  check("tool_throughput ≥ 1 × floor_commit.notify_c8", r("tool_throughput ÷ notifying-commit cap"), (v) => v >= 1);
  check("CPU per tool call ≤ 0.5 ms", r("CPU per tool call (ms)"), (v) => v <= 0.5, "ms");
  check("turn_text p50 ≤ 2 × (commits × floor_commit)", r("turn_text ÷ floor"), (v) => v <= 2);
  check("emit p50 ≤ 1.5 × floor_commit", r("emit ÷ floor"), (v) => v <= 1.5);
  check("tool_dispatch p50 ≤ 1.5 × floor_notify.commit_to_listener", r("tool_dispatch ÷ floor"), (v) => v <= 1.5);
  check("call round trip ≤ ¼ of pgboss_roundtrip", r("call_roundtrip ÷ pg-boss"), (v) => v <= 0.25);
  check("call round trip ≤ ¼ of graphile_roundtrip", r("call_roundtrip ÷ graphile-worker"), (v) => v <= 0.25);
  // The second stage's, against the bare stack of the same run: the floor of this architecture.
  check("tool_throughput ≥ 0.5 × floor_stack.throughput", inverse(r("floor_stack ÷ tool_throughput")), (v) => v >= 0.5);
  check("turn_text p50 ≤ 1.5 × floor_stack.turn_text", r("turn_text ÷ floor_stack"), (v) => v <= 1.5);
  check("emit p50 ≤ 1.5 × floor_stack.emit", r("emit ÷ floor_stack"), (v) => v <= 1.5);
  check(
    "tool_dispatch p50 ≤ 1.5 × floor_stack.dispatch",
    r("tool_dispatch.to_host_socket ÷ floor_stack"),
    (v) => v <= 1.5,
  );
  check("call round trip ≤ 2 × floor_stack.call_roundtrip", r("call_roundtrip ÷ floor_stack"), (v) => v <= 2);
  check("CPU per tool call ≤ 2 × floor_stack's", r("CPU per tool call ÷ floor_stack"), (v) => v <= 2);
  check(
    "text turn p50 flat beside millions of records (loaded ÷ empty ≤ 1.2)",
    r("journal_volume loaded ÷ empty"),
    (v) => v <= 1.2,
  );
  check(
    "journal size flat under a steady load with retention (largest ÷ window full ≤ 1.1)",
    r("journal_steady largest ÷ first"),
    (v) => v <= 1.1,
  );
  const stall = figures.find((f) => f.name === "journal_volume.appends_during_drop");
  check(
    "a write waits < 1 s while retention drops a week (longest append)",
    stall?.kind === "latency" ? rounded(stall.max) : undefined,
    (v) => v < 1000,
    "ms",
  );
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

/** Brain's calls/s ÷ the stack's, from the stack's ÷ Brain's (two decimals, as ratios are). */
function inverse(v: number | undefined): number | undefined {
  return v === undefined || v === 0 ? undefined : Math.round((1 / v) * 100) / 100;
}
