import { randomUUID } from "node:crypto";
import { channelFor } from "@aexhq/brain-db/commits";
import { connect } from "@aexhq/brain-db/connect";
import { migrate } from "@aexhq/brain-db/migrate";
import {
  appendUnchecked,
  createSession,
  insertHost,
  openConnection,
  registerServer,
  rel,
  transitionCall,
  type UncheckedRecord,
} from "@aexhq/brain-db/ops";
import { JournalWriter } from "@aexhq/brain-db/writer";
import type postgres from "postgres";

/**
 * What the bare stack's server (stack-server.ts) commits for a turn, in the order a turn commits
 * it. Two journals keep it: `bareJournal`, one row a record (floor_stack), and `brainJournal`,
 * Brain's own journal statements through its JournalWriter (floor_stack_journal), so the two
 * floors differ in nothing but what a commit writes.
 */
export interface StackJournal {
  /** The user's message (Brain: with the activation it starts and the first model call). */
  message(session: string, text: string): Promise<void>;
  /** The model's answer with its calls' intents, committed: each call's sequence and input. */
  answer(session: string, round: number, calls: number): Promise<{ seq: number; input: unknown }[]>;
  /** A call's result, committed (Brain: the call's transition, its budget charged). */
  result(session: string, seq: number, output: unknown): Promise<void>;
  /** A round's results are all in: Brain's next model call, once its wake window has passed. */
  next(session: string): Promise<void>;
  /** The final answer and the activation's end. */
  final(session: string): Promise<void>;
  /** One emission (Brain: on a running call of the session's, opened with its first emission). */
  emit(session: string, data: unknown): Promise<void>;
  close(): Promise<void>;
}

type Row = { session_id: string; seq: number; kind: string; payload: unknown };
type Pending = { rows: Row[]; done: () => void; failed: (e: unknown) => void };

/**
 * Every record a row, committed by a group commit on one connection: BEGIN, one INSERT of the
 * batch's rows, one NOTIFY, COMMIT, pipelined in one round trip (the journal writer's fast path).
 */
export async function bareJournal(sql: postgres.Sql, channel: string): Promise<StackJournal> {
  await sql`CREATE SCHEMA IF NOT EXISTS bench`;
  await sql`CREATE TABLE IF NOT EXISTS bench.stack_records (
    session_id uuid NOT NULL, seq int NOT NULL, kind text NOT NULL, payload jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (session_id, seq))`;
  const conn = await sql.reserve();
  const queue: Pending[] = [];
  let flushing = false;
  const flush = async () => {
    flushing = true;
    while (queue.length > 0) {
      const batch = queue.splice(0, 256);
      const rows = batch.flatMap((p) => p.rows);
      try {
        await Promise.all([
          conn`BEGIN`.execute(),
          conn`INSERT INTO bench.stack_records (session_id, seq, kind, payload)
               SELECT session_id, seq, kind, payload FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
                 AS r(session_id uuid, seq int, kind text, payload jsonb)`.execute(),
          conn`SELECT pg_notify(${channel}, ${String(rows.length)})`.execute(),
          conn`COMMIT`.execute(),
        ]);
        for (const p of batch) p.done();
      } catch (error) {
        // A floor has no failure path: the run reports the error and stops.
        for (const p of batch) p.failed(error);
      }
    }
    flushing = false;
  };
  const commit = (rows: Row[]) =>
    new Promise<void>((done, failed) => {
      queue.push({ rows, done, failed });
      if (!flushing) void flush();
    });
  const seqs = new Map<string, number>();
  const row = (session: string, kind: string, payload: unknown): Row => {
    const seq = (seqs.get(session) ?? 0) + 1;
    seqs.set(session, seq);
    return { session_id: session, seq, kind, payload };
  };
  return {
    message: (session, text) => commit([row(session, "user_message", { text })]),
    async answer(session, round, calls) {
      const intents = Array.from({ length: calls }, (_, i) => row(session, "tool_call_started", { name: "work", i }));
      await commit([row(session, "model_answer", { round, calls }), ...intents]);
      return intents.map((r) => ({ seq: r.seq, input: r.payload }));
    },
    result: (session, seq, output) => commit([row(session, "tool_call_ended", { call: seq, output })]),
    next: async () => {},
    final: (session) =>
      commit([
        row(session, "model_answer", { text: "done" }),
        row(session, "activation_ended", { status: "completed" }),
      ]),
    emit: (session, data) => commit([row(session, "extension", data)]),
    close: async () => conn.release(),
  };
}

/** Brain's wake window (the Tool API's five milliseconds from the first pending commit). */
const WAKE_MS = 5;
/** Brain's default emission budget (BRAIN_MAX_EMITTED_BYTES): its transitions merge by it. */
const MAX_EMITTED_BYTES = 1024 * 1024;
const TOOL = "bench_work";

interface SessionState {
  message: number;
  activation: number;
  model: number;
  /** Epoch ms of the round's first committed result: the wake window's start. */
  openedAt: number | null;
  calls: number;
}

/**
 * Brain's journal, written as Brain's server writes a `tool_throughput` turn, with none of its
 * logic around it: the same records (kinds, payload shapes), call rows dispatched to a connected
 * host, finishes as call transitions with the activation's budget charged, model calls counted,
 * the owner's fencing epoch on every append, all through Brain's JournalWriter (one connection,
 * merged statements, the writer's mark, NOTIFY of the commit's keys). What it leaves out is the
 * server: validation, the Agentloop, actors, the model provider, recovery.
 */
export async function brainJournal(url: string, applicationName = "bench-stack-journal"): Promise<StackJournal> {
  const schema = "brain";
  const sql = connect(url, { schema, searchPath: true, max: 2, applicationName });
  const serverId = randomUUID();
  const writer = new JournalWriter(sql, { channel: channelFor(schema), origin: serverId });
  await migrate(sql, schema);
  await registerServer(sql, serverId);
  const hostId = randomUUID();
  await insertHost(sql, hostId, null, Buffer.alloc(32));
  const connectionId = randomUUID();
  await openConnection(sql, connectionId, hostId, serverId);
  const sessions = new Map<string, SessionState>();
  /** The running call each emitting session reports on. */
  const emitting = new Map<string, number>();

  const append = async (session: string, records: UncheckedRecord[]): Promise<number[]> => {
    const r = await writer.submit(appendUnchecked(session, records, { epoch: 1 }));
    if (r.records.length === 0) throw new Error(`floor_stack_journal: session ${session} refused an append`);
    return r.records.map((x) => x.seq);
  };
  const modelEnded = (s: SessionState, text: string, toolCalls: unknown[]): UncheckedRecord => ({
    kind: "model_call_ended",
    payload: {
      call: s.model,
      model: "scripted",
      usage: { inputTokens: 0, outputTokens: 0 },
      outcome: { status: "ok" },
      response: { text, toolCalls, stopReason: toolCalls.length > 0 ? "tool_calls" : "end" },
    },
  });
  const create = async (session: string) => {
    const tools = [{ name: TOOL, env: { name: "application", type: "host" } }];
    await writer.submit(
      createSession({
        id: session,
        hostId,
        ownerId: serverId,
        model: { provider: "scripted" },
        tools,
        metadata: { bench: "floor_stack_journal" },
        created: { model: { provider: "scripted" }, tools, hostId },
      }),
    );
  };
  /** A call's intent, dispatched in its commit to the connected host, as Brain's server writes it. */
  const intent = (input: unknown, callId: string, activation: number | null): UncheckedRecord => ({
    kind: "tool_call_started",
    payload: { tool: TOOL, input, callId, deadline: null, activation },
    call: {
      tool: TOOL,
      activationSeq: activation,
      hostId,
      connectionId,
      state: "running",
      deadlineAt: null,
      executor: "host",
    },
  });
  const state = (session: string): SessionState => {
    const s = sessions.get(session);
    if (!s) throw new Error(`floor_stack_journal: no turn open in ${session}`);
    return s;
  };

  return {
    async message(session, text) {
      if (!sessions.has(session)) await create(session);
      const seqs = await append(session, [
        { kind: "user_message", payload: { text } },
        { kind: "activation_started", payload: { cause: "user_message", message: rel(-1) } },
        { kind: "model_call_started", payload: { origin: { type: "agentloop" }, activation: rel(-1) } },
      ]);
      sessions.set(session, { message: seqs[0]!, activation: seqs[1]!, model: seqs[2]!, openedAt: null, calls: 0 });
    },
    async answer(session, round, calls) {
      const s = state(session);
      const toolCalls = Array.from({ length: calls }, (_, i) => ({
        id: `call_${round}_${i}`,
        name: TOOL,
        input: { i: s.calls++ },
      }));
      const intents = toolCalls.map((tc) => intent(tc.input, tc.id, s.activation));
      const seqs = await append(session, [modelEnded(s, "", toolCalls), ...intents]);
      s.openedAt = null;
      return toolCalls.map((tc, i) => ({ seq: seqs[i + 1]!, input: tc.input }));
    },
    async result(session, seq, output) {
      const s = state(session);
      const r = await writer.submit(
        transitionCall(
          { sessionId: session, seq, hostId },
          { type: "finish", outcome: { status: "ok", value: output } as { status: string } },
          MAX_EMITTED_BYTES,
        ),
      );
      if (r.seq === null) throw new Error(`floor_stack_journal: call ${session}:${seq} was not open`);
      s.openedAt ??= Date.now();
    },
    async next(session) {
      const s = state(session);
      const openedAt = s.openedAt ?? Date.now();
      // As Brain's wake window does: a timer that fires early (Node's cached loop clock) waits again.
      for (let wait = openedAt + WAKE_MS - Date.now(); wait > 0; wait = openedAt + WAKE_MS - Date.now()) {
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
      const [seq] = await append(session, [
        {
          kind: "model_call_started",
          payload: { wake: { firedAt: Date.now(), openedAt }, origin: { type: "agentloop" }, activation: s.activation },
        },
      ]);
      s.model = seq!;
    },
    async final(session) {
      const s = state(session);
      await append(session, [
        modelEnded(s, "done", []),
        { kind: "assistant_message", payload: { text: "done", activation: s.activation } },
        {
          kind: "activation_ended",
          payload: { text: "done", status: "completed", message: s.message, activation: s.activation },
        },
      ]);
    },
    async emit(session, data) {
      let seq = emitting.get(session);
      if (seq === undefined) {
        await create(session);
        [seq] = await append(session, [intent({}, randomUUID(), null)]);
        emitting.set(session, seq!);
      }
      const r = await writer.submit(
        transitionCall(
          { sessionId: session, seq: seq!, hostId },
          { type: "emit", kind: "bench.tick", data },
          MAX_EMITTED_BYTES,
        ),
      );
      if (r.seq === null) throw new Error(`floor_stack_journal: the emitting call ${session}:${seq} was not open`);
    },
    async close() {
      await writer.close();
      await sql.end({ timeout: 2 });
    },
  };
}
