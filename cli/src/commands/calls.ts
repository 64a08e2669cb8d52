import { parseArgs } from "node:util";
import { listCalls } from "@aexhq/brain-db/ops";
import { api } from "../api.js";
import type { CliEnv } from "../config.js";
import { withReadDatabase } from "../database.js";
import { UsageError } from "../errors.js";
import { out, printJson, printTable } from "../output.js";

/**
 * `brain calls ls [--open]` reads brain.tool_calls (every session, so SQL; from BRAIN_READ_URL's
 * replica when set); `brain calls cancel
 * <session> <seq>` goes through the HTTP API, so the cancellation is journaled and the host's
 * signal fires exactly as session.cancelCall(seq) would.
 */
export async function callsCommand(args: string[], env: CliEnv): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "ls") return ls(rest, env);
  if (sub === "cancel") return cancel(rest, env);
  throw new UsageError(`calls: expected ls or cancel${sub ? `, not ${sub}` : ""}`);
}

async function ls(args: string[], env: CliEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { open: { type: "boolean" }, json: { type: "boolean" }, limit: { type: "string", default: "100" } },
    strict: true,
  });
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError("--limit: a positive integer");
  const rows = await withReadDatabase(env, (sql) => listCalls(sql, { open: values.open === true, limit }));
  if (values.json) printJson(rows);
  else printTable(rows, ["session_id", "seq", "tool", "status", "outcome", "started_at", "deadline_at"]);
  return 0;
}

async function cancel(args: string[], env: CliEnv): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { json: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  const [session, seqText, ...extra] = positionals;
  const seq = Number(seqText);
  if (!session || !Number.isInteger(seq) || seq < 1 || extra.length > 0) {
    throw new UsageError("calls cancel: expected <session> <seq>");
  }
  const r = await api<{ cancelled: boolean; sequence: number | null }>(
    env,
    "POST",
    `/v1/sessions/${encodeURIComponent(session)}/calls/${seq}/cancel`,
  );
  if (values.json) printJson(r);
  else out(r.cancelled ? `cancelled call ${seq} (record ${r.sequence})` : `call ${seq} had already ended`);
  return 0;
}
