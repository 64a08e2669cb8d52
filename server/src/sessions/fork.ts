import {
  BrainError,
  type ForkSessionBodySchema,
  payloadOf,
  type RecordPayload,
  type StoredRecord,
} from "@aexhq/brain-contracts";
import { sealSessionSecrets, storedModelConfig } from "@aexhq/brain-core/models";
import {
  forkSession,
  MODEL_SECRET,
  newSessionId,
  readRecords,
  type SessionRow,
  secretAad,
  sessionSecrets,
} from "@aexhq/brain-db/ops";
import type { Sealed } from "@aexhq/brain-db/secrets";
import { ownerOf, type Principal } from "../plugins/auth.js";
import type { Services } from "../services.js";

export type ForkBody = ReturnType<typeof ForkSessionBodySchema.parse>;
export type ForkDeps = Pick<Services, "sql" | "secrets" | "writer" | "serverId" | "actors" | "quotas">;

/** How what was open at the fork's sequence is closed in the fork: not carried as open. */
const FORKED = { status: "cancelled", cause: "forked" } as const;

/**
 * Forks `sourceId` at `body.at`: a new session whose journal is the source's up to `at`, then the
 * records closing what was open there (tool calls end `cancelled` with cause `forked`, a model
 * call `unknown`, the activation `cancelled`), owned by this server and parked. The source is
 * untouched. Its next turn runs the Agentloop on the forked conversation, with `body.model` and
 * `body.system` when given.
 */
export async function forkSessionFor(
  rt: ForkDeps,
  principal: Principal,
  sourceId: string,
  body: ForkBody,
): Promise<SessionRow> {
  const records = await journalUpTo(rt, sourceId, body.at);
  const created = payloadOf(records[0], "session_created");
  if (!created) throw new BrainError("not_found");
  const { closing, openCalls } = closingRecords(records);
  const id = newSessionId();
  const model = body.model ? storedModelConfig(body.model) : null;
  const tokenId = ownerOf(principal);
  const guarded = await rt.quotas.guard(tokenId, "sessions");
  const quota = guarded && tokenId ? { quota: { tokenId, fallback: guarded.fallback } } : {};
  const row = await rt.writer.submit(
    forkSession({
      source: sourceId,
      id,
      at: body.at,
      ownerId: rt.serverId,
      model,
      created: forkCreated(
        body.system === undefined ? created : { ...created, system: body.system },
        sourceId,
        body.at,
        model,
        records,
      ),
      secrets: await resealed(rt, sourceId, id, body),
      closing,
      openCalls,
      closedOutcome: FORKED,
      ...quota,
    }),
  );
  rt.actors.created(row.id, row.last_seq);
  return row;
}

/** The fork's session_created: the source's, naming it; with another model, that model and what it did not answer. */
function forkCreated(
  created: RecordPayload<"session_created">,
  source: string,
  at: number,
  model: unknown,
  records: StoredRecord[],
): RecordPayload<"session_created"> {
  if (!model) return { ...created, forkedFrom: { session: source, sequence: at } };
  const modelCalls = records.filter((r) => payloadOf(r, "model_call_started")?.origin.type === "agentloop").length;
  return {
    ...created,
    model: model as typeof created.model,
    forkedFrom: { session: source, sequence: at, modelCalls },
  };
}

/** The source's records 1..at; refused when `at` is at or past its session_ended. */
async function journalUpTo(rt: ForkDeps, sessionId: string, at: number): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  while (out.length < at) {
    const page = await readRecords(rt.sql, sessionId, out.length, Math.min(1000, at - out.length));
    if (page.length === 0) break;
    out.push(...page.map((r) => ({ kind: r.kind, payload: r.payload, seq: r.seq })));
  }
  if (out.length === 0) throw new BrainError("not_found");
  if (out.length < at) throw new BrainError("invalid_request", `The session's journal ends at ${out.length}.`);
  if (out.some((r) => r.kind === "session_ended")) {
    throw new BrainError("invalid_request", "A fork begins before the session's end.");
  }
  return out;
}

/** What was open at the fork's last record, and the records that close it, in that order. */
function closingRecords(records: StoredRecord[]) {
  const calls = new Set<number>();
  const models = new Map<number, RecordPayload<"model_call_started">>();
  let activation: { seq: number; message: number | null } | null = null;
  for (const r of records) {
    const seq = Number(r.seq);
    if (payloadOf(r, "tool_call_started")) calls.add(seq);
    const ended = payloadOf(r, "tool_call_ended");
    if (ended) calls.delete(ended.call);
    const model = payloadOf(r, "model_call_started");
    if (model) models.set(seq, model);
    const modelEnded = payloadOf(r, "model_call_ended");
    if (modelEnded) models.delete(modelEnded.call);
    const started = payloadOf(r, "activation_started");
    if (started) activation = { seq, message: started.message ?? null };
    if (payloadOf(r, "activation_ended")) activation = null;
  }
  const closing: { kind: string; payload: unknown }[] = [];
  for (const [call, started] of models) {
    closing.push({
      kind: "model_call_ended",
      payload: { call, origin: started.origin, outcome: { status: "unknown", cause: "forked" } },
    });
  }
  for (const call of calls) closing.push({ kind: "tool_call_ended", payload: { call, outcome: FORKED } });
  if (activation) {
    const { seq, message } = activation;
    closing.push({ kind: "activation_ended", payload: { activation: seq, message, status: "cancelled", text: "" } });
  }
  return { closing, openCalls: [...calls] };
}

/** The source's secrets sealed for the fork's id; the model's key replaced when another model is asked for. */
async function resealed(rt: ForkDeps, sourceId: string, id: string, body: ForkBody) {
  const out: { name: string; sealed: Sealed }[] = [];
  for (const { name, sealed } of await sessionSecrets(rt.sql, sourceId)) {
    if (body.model && name === MODEL_SECRET) continue;
    const plain = rt.secrets.open(sealed, secretAad(sourceId, name));
    out.push({ name, sealed: rt.secrets.seal(plain, secretAad(id, name)) });
  }
  if (body.model)
    out.push(...sealSessionSecrets(rt.secrets, id, { model: body.model }).filter((s) => s.name === MODEL_SECRET));
  return out;
}
