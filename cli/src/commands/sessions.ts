import { type ParseArgsConfig, parseArgs } from "node:util";
import type { JournalEvent, Session } from "@aexhq/brain-contracts";
import { api, request } from "../api.js";
import type { CliEnv } from "../config.js";
import { UsageError } from "../errors.js";
import { cell, out, printJson, printTable, truncate } from "../output.js";

/** `brain sessions ls | show <id> | tail <id> | fork <id> --at N`, through the HTTP API (BRAIN_URL, BRAIN_TOKEN). */
export async function sessionsCommand(args: string[], env: CliEnv): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "ls") return ls(rest, env);
  if (sub === "show") return show(rest, env);
  if (sub === "tail") return tail(rest, env);
  if (sub === "fork") return fork(rest, env);
  throw new UsageError(`sessions: expected ls, show, tail or fork${sub ? `, not ${sub}` : ""}`);
}

async function ls(args: string[], env: CliEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { json: { type: "boolean" }, limit: { type: "string", default: "50" } },
    strict: true,
  });
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new UsageError("--limit: 1 to 200");
  const page = await api<{ sessions: Session[] }>(env, "GET", `/v1/sessions?limit=${limit}`);
  if (values.json) printJson(page.sessions);
  else
    printTable(
      page.sessions.map((s) => ({
        id: s.id,
        status: s.status,
        records: s.lastSequence,
        tools: s.tools.join(","),
        created: s.createdAt,
        ended: s.endedAt,
      })),
    );
  return 0;
}

function oneId(args: string[], what: string, options: NonNullable<ParseArgsConfig["options"]> = {}) {
  const parsed = parseArgs({
    args,
    options: { json: { type: "boolean" }, ...options },
    allowPositionals: true,
    strict: true,
  });
  const [id, ...extra] = parsed.positionals;
  if (!id || extra.length > 0) throw new UsageError(`${what}: expected one session id`);
  return { id: encodeURIComponent(id), values: parsed.values as Record<string, string | boolean | undefined> };
}

/**
 * A fork of the session at `--at` (the last record it keeps), with `--model` (a model
 * configuration as JSON) instead of the source's when given; prints the fork's id.
 */
async function fork(args: string[], env: CliEnv): Promise<number> {
  const { id, values } = oneId(args, "sessions fork", {
    at: { type: "string" },
    model: { type: "string" },
    system: { type: "string" },
  });
  const at = Number(values.at);
  if (!Number.isInteger(at) || at < 1) throw new UsageError("sessions fork: --at <sequence> is required");
  let model: unknown;
  if (typeof values.model === "string") {
    try {
      model = JSON.parse(values.model);
    } catch {
      throw new UsageError("sessions fork: --model must be JSON");
    }
  }
  const body = {
    at,
    ...(model === undefined ? {} : { model }),
    ...(typeof values.system === "string" ? { system: values.system } : {}),
  };
  const session = await api<Session>(env, "POST", `/v1/sessions/${id}/fork`, body);
  if (values.json) printJson(session);
  else out(`${session.id} (forked from ${decodeURIComponent(id)} at ${at})`);
  return 0;
}

/** The session and its most recent records. */
async function show(args: string[], env: CliEnv): Promise<number> {
  const { id, values } = oneId(args, "sessions show");
  const session = await api<Session>(env, "GET", `/v1/sessions/${id}`);
  const after = Math.max(0, session.lastSequence - 20);
  const res = await request(env, "GET", `/v1/sessions/${id}/events?after=${after}`);
  const events = (await res.text())
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as JournalEvent);
  if (values.json) {
    printJson({ ...session, recent: events });
    return 0;
  }
  for (const [k, v] of Object.entries(session)) out(`${`${k}:`.padEnd(14)}${cell(v)}`);
  out("");
  printTable(events.map(eventRow));
  return 0;
}

/**
 * Follows the journal live (the server's NDJSON event stream) until the session ends, including
 * the progress a tool reports with ctx.emit. --json prints the events as NDJSON.
 */
async function tail(args: string[], env: CliEnv): Promise<number> {
  const { id, values } = oneId(args, "sessions tail", { after: { type: "string", default: "0" } });
  const after = Number(values.after);
  if (!Number.isInteger(after) || after < 0) throw new UsageError("--after: a sequence number");
  const res = await request(env, "GET", `/v1/sessions/${id}/events?after=${after}&follow=true`);
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let nl = buffered.indexOf("\n");
    while (nl >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line) {
        if (values.json) out(line);
        else {
          const r = eventRow(JSON.parse(line) as JournalEvent);
          out(`${String(r.seq).padStart(5)}  ${r.at}  ${String(r.kind).padEnd(20)}  ${r.payload}`);
        }
      }
      nl = buffered.indexOf("\n");
    }
  }
  return 0;
}

function eventRow(e: JournalEvent) {
  return { seq: e.sequence, at: e.createdAt, kind: e.kind, payload: truncate(JSON.stringify(e.payload), 100) };
}
