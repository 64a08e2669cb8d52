import { parseArgs } from "node:util";
import type { PendingApproval } from "@aexhq/brain-contracts";
import { api } from "../api.js";
import type { CliEnv } from "../config.js";
import { UsageError } from "../errors.js";
import { out, printJson, printTable } from "../output.js";

/**
 * `brain approvals ls <session>`, `approve <session> <call> [--input JSON]` and `deny <session>
 * <call> [--reason TEXT]`: the calls waiting at an approval gate and the decisions on them, through
 * the HTTP API, so a decision is journaled exactly as session.approve / deny would.
 */
export async function approvalsCommand(args: string[], env: CliEnv): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "ls") return ls(rest, env);
  if (sub === "approve" || sub === "deny") return decide(sub, rest, env);
  throw new UsageError(`approvals: expected ls, approve or deny${sub ? `, not ${sub}` : ""}`);
}

async function ls(args: string[], env: CliEnv): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { json: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  const [session, ...extra] = positionals;
  if (!session || extra.length > 0) throw new UsageError("approvals ls: expected <session>");
  const r = await api<{ approvals: PendingApproval[] }>(
    env,
    "GET",
    `/v1/sessions/${encodeURIComponent(session)}/approvals`,
  );
  if (values.json) printJson(r.approvals);
  else {
    const rows = r.approvals.map((a) => ({ ...a, input: JSON.stringify(a.input) }));
    printTable(rows, ["call", "tool", "input", "inputHash", "requestedAt"]);
  }
  return 0;
}

async function decide(verb: "approve" | "deny", args: string[], env: CliEnv): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { json: { type: "boolean" }, input: { type: "string" }, reason: { type: "string" } },
    allowPositionals: true,
    strict: true,
  });
  const [session, callText, ...extra] = positionals;
  const call = Number(callText);
  if (!session || !Number.isInteger(call) || call < 1 || extra.length > 0) {
    throw new UsageError(`approvals ${verb}: expected <session> <call>`);
  }
  if (verb === "deny" && values.input !== undefined) throw new UsageError("approvals deny: --input is for approve");
  if (verb === "approve" && values.reason !== undefined)
    throw new UsageError("approvals approve: --reason is for deny");
  const body =
    verb === "approve" ? approveBody(values.input) : values.reason === undefined ? {} : { reason: values.reason };
  const path = `/v1/sessions/${encodeURIComponent(session)}/calls/${call}/${verb}`;
  const r = await api<{ call: number; decision: string; sequence: number }>(env, "POST", path, body);
  if (values.json) printJson(r);
  else out(`call ${call} ${r.decision} (record ${r.sequence})`);
  return 0;
}

function approveBody(input: string | undefined): { input?: unknown } {
  if (input === undefined) return {};
  try {
    return { input: JSON.parse(input) };
  } catch {
    throw new UsageError("approvals approve: --input must be JSON");
  }
}
