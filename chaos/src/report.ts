// The run's summary: what was injected, what the load did, how calls ended, and each invariant.
import type { Sql } from "postgres";
import type { ChaosOptions } from "./args.js";
import type { FaultLog } from "./faults.js";
import type { CheckResult } from "./invariants.js";
import type { LoadStats } from "./load.js";
import type { UnexpectedExit } from "./processes.js";

export interface Liveness {
  /** Sessions that completed a turn after the faults stopped. */
  recovered: number;
  notRecovered: string[];
  /** Processes not running, or servers not answering a database-backed request, at the end. */
  unresponsive: string[];
}

export interface RunStats {
  sessions: number;
  records: number;
  calls: { tool: string; status: string; cause: string; n: number }[];
  activations: { status: string; n: number }[];
  /** Error outcomes with their messages: none is expected from these tools, so each one is a lead. */
  errors: { tool: string; code: string; message: string; n: number }[];
}

export async function runStats(sql: Sql): Promise<RunStats> {
  const [totals] = await sql<{ sessions: number; records: number }[]>`
    SELECT (SELECT count(*) FROM brain.sessions)::int AS sessions, (SELECT count(*) FROM brain.journal)::int AS records`;
  const calls = await sql<RunStats["calls"]>`
    SELECT tool, coalesce(outcome->>'status', status) AS status,
           coalesce(outcome->>'cause', outcome->'error'->>'code', '') AS cause, count(*)::int AS n
    FROM brain.tool_calls GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;
  const activations = await sql<RunStats["activations"]>`
    SELECT payload->>'status' AS status, count(*)::int AS n
    FROM brain.journal WHERE kind = 'activation_ended' GROUP BY 1 ORDER BY 1`;
  const errors = await sql<RunStats["errors"]>`
    SELECT tool, outcome->'error'->>'code' AS code, left(outcome->'error'->>'message', 160) AS message, count(*)::int AS n
    FROM brain.tool_calls WHERE outcome->>'status' = 'error' GROUP BY 1, 2, 3 ORDER BY 4 DESC LIMIT 8`;
  return {
    sessions: totals?.sessions ?? 0,
    records: totals?.records ?? 0,
    calls: [...calls],
    activations: [...activations],
    errors: [...errors],
  };
}

export interface Report {
  options: ChaosOptions;
  seconds: number;
  faults: FaultLog[];
  load: LoadStats;
  stats: RunStats;
  exits: UnexpectedExit[];
  liveness: Liveness;
  startFailures: string[];
  results: CheckResult[];
  /** --failover: ms from the promotion to the first turn that ended after it (null: none within the limit). */
  resumedMs?: number | null;
}

/** Prints the summary; true when every check passed. */
export function printReport(r: Report): boolean {
  const out = (line = "") => console.log(line);
  const counts = (items: string[]) =>
    [...items.reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<string, number>())]
      .map(([k, n]) => `${k} ${n}`)
      .join(", ") || "none";
  out();
  const through = r.options.pooler
    ? `, through PgBouncer (${r.options.pooler})`
    : r.options.failover
      ? ", a primary and a synchronous standby"
      : "";
  out(`== chaos summary: seed ${r.options.seed}, ${r.options.seconds} s of faults${through}, ${r.seconds} s in all ==`);
  out(`faults: ${counts(r.faults.map((f) => f.kind))}`);
  for (const f of r.faults.filter((f) => f.error)) out(`  fault at ${f.at} s (${f.kind}) failed: ${f.error}`);
  out(`sessions ${r.stats.sessions}, journal records ${r.stats.records}`);
  out(
    `messages acknowledged ${r.load.messagesAcked}, abandoned ${r.load.messagesAbandoned}; ` +
      `turns: ${[...r.load.turns].map(([k, n]) => `${k} ${n}`).join(", ") || "none"}`,
  );
  out(`failed client attempts: ${[...r.load.failedAttempts].map(([k, n]) => `${k} ×${n}`).join(", ") || "none"}`);
  out(`activations: ${r.stats.activations.map((a) => `${a.status} ${a.n}`).join(", ") || "none"}`);
  out("tool calls (tool: outcome [cause] count):");
  const byTool = new Map<string, string[]>();
  for (const c of r.stats.calls) {
    const list = byTool.get(c.tool) ?? [];
    list.push(`${c.status}${c.cause ? ` [${c.cause}]` : ""} ${c.n}`);
    byTool.set(c.tool, list);
  }
  for (const [tool, list] of byTool) out(`  ${tool}: ${list.join(", ")}`);
  for (const e of r.stats.errors) out(`  error outcome ${e.tool} ${e.code} ×${e.n}: ${e.message}`);
  if (r.startFailures.length > 0) out(`restart attempts that failed: ${counts(r.startFailures)}`);

  out("invariants:");
  let ok = true;
  const line = (pass: boolean, name: string, detail: string) => {
    ok &&= pass;
    out(`  ${pass ? "PASS" : "FAIL"} ${name}${detail ? `: ${detail}` : ""}`);
  };
  for (const { check, violations, sample } of r.results) {
    line(violations === 0, check.name, violations === 0 ? "" : `${violations} violation(s) of "${check.promise}"`);
    for (const row of sample) out(`       ${JSON.stringify(row)}`);
  }
  line(r.exits.length === 0, "no process exited on its own", r.exits.length === 0 ? "" : `${r.exits.length} exit(s)`);
  // Grouped by process kind and the error it printed; the first of each group with its last lines.
  const groups = new Map<string, UnexpectedExit[]>();
  for (const e of r.exits) {
    const key = `${e.name.replace(/-\d+$/, "")} ${e.code ?? e.signal} ${e.error}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  for (const [, group] of groups) {
    const first = group[0]!;
    const names = [...new Set(group.map((e) => e.name))].join(", ");
    const how = `${group.length} exit(s) ${first.code ?? first.signal}, first at ${first.at} s`;
    out(`       ${names}: ${how}: ${first.error || "(no error line)"}`);
    for (const l of first.tail.filter((l) => l.trim() && !l.startsWith("{")).slice(-4))
      out(`         ${l.slice(0, 200)}`);
  }
  line(
    r.liveness.unresponsive.length === 0,
    "every process alive and answering at the end",
    r.liveness.unresponsive.join(", "),
  );
  line(
    r.liveness.notRecovered.length === 0,
    "every session completes a turn after the faults",
    r.liveness.notRecovered.length === 0
      ? `${r.liveness.recovered} sessions`
      : `not: ${r.liveness.notRecovered.join(", ")}`,
  );
  if (r.resumedMs !== undefined)
    line(
      r.resumedMs !== null,
      "work resumes on the promoted standby",
      r.resumedMs === null ? "no turn ended within 30 s" : `the first turn ended ${r.resumedMs} ms after the promotion`,
    );
  out(ok ? "chaos: all invariants hold" : `chaos: VIOLATIONS (reproduce the schedule with --seed ${r.options.seed})`);
  return ok;
}
