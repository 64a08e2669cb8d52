import { parseArgs } from "node:util";
import type { Sql } from "@aexhq/brain-db/connect";
import { bossInstalled, citusInstalled, loadMigrations } from "@aexhq/brain-db/migrate";
import {
  citusPlacement,
  databaseFacts,
  durability,
  listenNotifyDelivered,
  liveProcesses,
  replicaLag,
  SERVER_STALE_SECONDS,
} from "@aexhq/brain-db/ops";
import type { CliEnv } from "../config.js";
import { openReplica, withDatabase } from "../database.js";
import { CliError } from "../errors.js";
import { printJson, printTable } from "../output.js";

/** Beyond this, deadlines (epoch ms from a server's clock) and the database's timestamps disagree. */
const MAX_SKEW_MS = 2000;

interface Check {
  check: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

/**
 * `brain doctor`: the database answers, its schema is this release's, LISTEN/NOTIFY is really
 * delivered (else, through a transaction-mode pooler, wake-ups poll), clocks agree, servers heartbeat and workers
 * are alive. Exit 1 when a check fails; warnings do not fail.
 */
export async function doctorCommand(args: string[], env: CliEnv): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: "boolean" } }, strict: true });
  const checks: Check[] = [];
  const add = (check: string, status: Check["status"], detail: string) => checks.push({ check, status, detail });
  try {
    await withDatabase(env, async (sql) => {
      const before = Date.now();
      const facts = await databaseFacts(sql, env.schema);
      const rtt = Date.now() - before;
      add("database", "ok", `reachable (${rtt} ms round trip)`);
      const latest = loadMigrations().length;
      add(
        "schema",
        facts.version === latest ? "ok" : "fail",
        facts.version === latest
          ? `${env.schema} at version ${latest}`
          : `${env.schema} at version ${facts.version}, this release needs ${latest}: run brain migrate`,
      );
      const boss = await bossInstalled(sql, env.schema);
      add("pg-boss", boss ? "ok" : "fail", boss ? "schema installed" : "not installed: run brain migrate");
      const delivered = await listenNotifyDelivered(sql, 3000);
      add(
        "listen/notify",
        delivered ? "ok" : "warn",
        delivered
          ? "a NOTIFY reached a LISTEN on another connection"
          : "a NOTIFY never arrived (is DATABASE_URL a transaction-mode pooler?): wake-ups fall back to polling every second; set BRAIN_DIRECT_URL to a direct connection",
      );
      const acks = await durability(sql);
      add(
        "durability",
        acks.synchronousCommit === "off" ? "warn" : "ok",
        `synchronous_commit=${acks.synchronousCommit}, synchronous_standby_names='${acks.synchronousStandbys}': ${acks.meaning}`,
      );
      const skew = before + rtt / 2 - facts.nowMs;
      add(
        "clock (this host)",
        Math.abs(skew) - rtt / 2 > MAX_SKEW_MS ? "fail" : "ok",
        `${Math.round(skew)} ms from the database's clock`,
      );
      if (env.readUrl) await replicaCheck(sql, env, add);
      if (facts.version > 0 && (await citusInstalled(sql))) await citusCheck(sql, env.schema, add);
      // Without Brain's tables there are no servers to look at (the schema check already failed).
      if (facts.version > 0) await serversCheck(await liveProcesses(sql), add);
    });
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    add("database", "fail", error.message);
  }
  if (values.json) printJson({ ok: checks.every((c) => c.status !== "fail"), checks });
  else printTable(checks);
  return checks.some((c) => c.status === "fail") ? 1 : 0;
}

type Proc = Awaited<ReturnType<typeof liveProcesses>>[number];
type Add = (check: string, status: Check["status"], detail: string) => void;

/** On a Citus coordinator: where Brain's tables are, and whether each is where it belongs. */
async function citusCheck(sql: Sql, schema: string, add: Add): Promise<void> {
  const p = await citusPlacement(sql, schema);
  if (p.notDistributed.includes("sessions")) {
    add("citus", "ok", "a coordinator; Brain's tables are local to it (brain migrate --citus distributes them)");
    return;
  }
  const nodes = p.shardsPerNode.map((n) => `${n.node} ${n.shards}`).join(", ");
  const left = [...p.notDistributed, ...p.notReference];
  add(
    "citus",
    left.length > 0 ? "warn" : "ok",
    `session shards per worker: ${nodes}; ${left.length > 0 ? `not placed: ${left.join(", ")} (run brain migrate --citus)` : "every table placed"}`,
  );
}

/** BRAIN_READ_URL: reachable, a standby (else it is the primary itself), and how far behind. */
async function replicaCheck(primary: Sql, env: CliEnv, add: Add): Promise<void> {
  const read = openReplica(env.readUrl!, env.schema);
  try {
    const lag = await replicaLag(primary, read);
    const behind = lag.bytes === 0 ? "caught up" : `${lag.bytes} bytes of WAL behind, ${lag.seconds.toFixed(1)} s old`;
    add(
      "read replica",
      lag.standby ? "ok" : "warn",
      lag.standby ? `a standby, ${behind}` : "BRAIN_READ_URL is not a standby: reads go to a primary",
    );
  } catch (error) {
    add("read replica", "fail", `BRAIN_READ_URL: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await read.end({ timeout: 1 });
  }
}

async function serversCheck(procs: Proc[], add: Add): Promise<void> {
  // heartbeat_at is written with the database's now(): its age says whether a process still beats.
  const stale = procs.filter((p) => p.heartbeat_age > SERVER_STALE_SECONDS);
  const servers = procs.filter((p) => p.kind === "server" && p.heartbeat_age <= SERVER_STALE_SECONDS);
  const workers = procs.filter((p) => p.kind === "worker" && p.heartbeat_age <= SERVER_STALE_SECONDS);
  const oldest = Math.max(0, ...servers.map((p) => p.heartbeat_age));
  add(
    "servers",
    servers.length > 0 ? "ok" : "warn",
    servers.length > 0 ? `${servers.length} alive, last heartbeats ≤ ${oldest.toFixed(1)} s ago` : "none alive",
  );
  add(
    "workers",
    workers.length > 0 ? "ok" : "warn",
    workers.length > 0 ? `${workers.length} alive` : "none alive: component and HTTP tools wait for one",
  );
  if (stale.length > 0) {
    const n = stale.length;
    add("heartbeats", "warn", `${n} not stopped but silent > ${SERVER_STALE_SECONDS} s (the others declare them dead)`);
  }
  // Each server's own clock, by the Date header of its /healthz (1 s resolution) against this
  // host's, which was just measured against the database's.
  for (const p of servers) {
    if (!p.url) continue;
    try {
      const t0 = Date.now();
      const res = await fetch(`${p.url}/healthz`, { signal: AbortSignal.timeout(2000) });
      const date = Date.parse(res.headers.get("date") ?? "");
      if (Number.isNaN(date)) continue;
      // The header truncates to the second: compare with the middle of that second.
      const skew = date + 500 - (t0 + Date.now()) / 2;
      add(
        `clock ${p.url}`,
        Math.abs(skew) > MAX_SKEW_MS + 1000 ? "fail" : "ok",
        `${Math.round(skew)} ms (±1 s) from this host`,
      );
    } catch {
      add(`server ${p.url}`, "warn", "heartbeats, but its URL does not answer from here");
    }
  }
}
