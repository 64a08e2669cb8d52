import { parseArgs } from "node:util";
import { prune } from "@aexhq/brain-db/ops";
import type { CliEnv } from "../config.js";
import { withDatabase } from "../database.js";
import { UsageError } from "../errors.js";
import { out, printJson, printTable } from "../output.js";

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `7d`, `12h`, `30m`, `90s` → seconds. */
export function parseAge(text: string): number {
  const m = /^(\d+)([smhd])$/.exec(text);
  if (!m) throw new UsageError(`--older-than: a duration like 7d, 12h, 30m or 90s, not ${text}`);
  return Number(m[1]) * UNIT_SECONDS[m[2]!]!;
}

/**
 * `brain prune [--older-than 7d] [--dry-run]`: what background retention does, on demand; the age
 * defaults to BRAIN_RETENTION_DAYS. It waits for a server's prune in progress rather than racing it.
 * On a Citus cluster it finds out by itself (docs/scaling.md, retention on a cluster).
 */
export async function pruneCommand(args: string[], env: CliEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { "older-than": { type: "string" }, "dry-run": { type: "boolean" }, json: { type: "boolean" } },
    strict: true,
  });
  const seconds = values["older-than"] ? parseAge(values["older-than"]) : env.retentionDays * 86_400;
  if (seconds <= 0) {
    out("retention is off (BRAIN_RETENTION_DAYS=0): pass --older-than to prune");
    return 0;
  }
  const dryRun = values["dry-run"] === true;
  const counts = await withDatabase(env, async (sql) => {
    return prune(sql, env.schema, { olderThanSeconds: seconds, dryRun, wait: true });
  });
  const result = { dryRun, olderThanSeconds: seconds, ...counts };
  if (values.json) printJson(result);
  else {
    out(dryRun ? `would delete (older than ${seconds} s):` : `deleted (older than ${seconds} s):`);
    printTable(Object.entries(counts ?? {}).map(([table, rows]) => ({ table, rows })));
  }
  return 0;
}
