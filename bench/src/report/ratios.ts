import type { Figure, RateFigure } from "../measure/stats.js";
import { round, value } from "../measure/stats.js";
import { cpuPerCall, figureValue, journalSizes, p50, type Ratio, rateOf, ratioList } from "./figures.js";

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
      "live_text.other_server ÷ floor",
      p50(figures, "live_text.other_server"),
      toListener,
      "p50 ÷ floor_notify.commit_to_listener p50",
    );
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
  push(
    "call_roundtrip ÷ DBOS",
    p50(figures, "turn_one_tool.call_roundtrip"),
    p50(figures, "dbos_roundtrip"),
    "p50 ÷ dbos_roundtrip p50",
  );
  push(
    "tool_throughput ÷ DBOS",
    rateOf(figures, "tool_throughput"),
    rateOf(figures, "dbos_roundtrip.throughput"),
    "calls/s ÷ dbos_roundtrip.throughput calls/s",
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
  push(
    "citus ÷ tool_throughput",
    rateOf(figures, "citus"),
    rateOf(figures, "tool_throughput"),
    "calls/s on a coordinator and 2 workers on this machine ÷ on one Postgres, the same load",
  );
  push(
    "journal_steady largest ÷ first",
    figureValue(figures, "journal_steady.journal_max"),
    figureValue(figures, "journal_steady.journal_first"),
    "journal size (records and calls) at its largest ÷ once retention's window was full",
  );
  const before = p50(figures, "journal_volume.turn_empty");
  const after = p50(figures, "journal_volume.turn_after");
  push(
    "journal_volume loaded ÷ empty",
    p50(figures, "journal_volume.turn_loaded"),
    before !== undefined && after !== undefined ? (before + after) / 2 : before,
    "text turn p50 beside millions of records ÷ the mean of its p50s on the empty database before the load and after retention",
  );
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
  const baselines = figures.filter((f) => /^(floor_commit|floor_notify|pgboss_|graphile_|dbos_)/.test(f.name));
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
