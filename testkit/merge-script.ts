import { randomUUID } from "node:crypto";
import type { Sql } from "@aexhq/brain-db/connect";
import { appendUnchecked, endSession, rel, transitionCall } from "@aexhq/brain-db/ops";
import type { JournalWriter, WriteOp } from "@aexhq/brain-db/writer";
import { expect } from "vitest";
import { bareSession } from "./session-rows.js";

/**
 * A script of appends and call transitions to three sessions, interleaved, with every outcome a
 * write can have (written, fenced, refused on an ended session, over budget, after the end): the
 * writer's merged statements (db/test/writer-merge.test.ts) and a Citus cluster's delegated ones
 * (db/test/citus/delegated-writes.citus.test.ts) must journal exactly what it spells out.
 */
export const MAX_BYTES = 200;

export interface ScriptRows {
  serverId: string;
  hostId: string;
  connectionId: string;
}

export function scriptRows(): ScriptRows {
  return { serverId: randomUUID(), hostId: randomUUID(), connectionId: randomUUID() };
}

/** The server and host the script's sessions reference. */
export async function insertScriptRows(sql: Sql, rows: ScriptRows): Promise<void> {
  await sql`INSERT INTO servers (id) VALUES (${rows.serverId})`;
  await sql`INSERT INTO hosts (id, token_hash) VALUES (${rows.hostId}, '\\x00')`;
}

const started = (rows: ScriptRows, tool: string) => ({
  kind: "tool_call_started",
  payload: { tool, input: { tool } },
  call: {
    tool,
    activationSeq: 2,
    hostId: rows.hostId,
    connectionId: rows.connectionId,
    state: "running" as const,
    deadlineAt: null,
  },
});

export type ScriptSessions = { a: string; b: string; c: string };

/** Sessions a, b, c (c ended), each with an activation and a running call at seq 3. */
export async function prepareSessions(w: JournalWriter, rows: ScriptRows): Promise<ScriptSessions> {
  const ids = { a: randomUUID(), b: randomUUID(), c: randomUUID() };
  for (const id of Object.values(ids)) {
    await w.submit(bareSession(id, rows.hostId, rows.serverId));
    await w.submit(
      appendUnchecked(id, [{ kind: "model_call_started", payload: { activation: 2 } }, started(rows, "t")]),
    );
  }
  await w.submit(endSession(ids.c, "done"));
  return ids;
}

/**
 * The writes under test, in submission order. Each session gets several, interleaved with the
 * others', so a merged batch holds rounds: a session's k-th write in the k-th statement of its kind.
 */
export function script(s: ScriptSessions, rows: ScriptRows): WriteOp<unknown>[] {
  const onA = { sessionId: s.a, seq: 3, hostId: rows.hostId };
  const onB = { sessionId: s.b, seq: 3, hostId: rows.hostId };
  return [
    appendUnchecked(s.a, [
      { kind: "note", payload: { n: 1 } },
      { kind: "reply", payload: { to: rel(-1) } },
    ]),
    transitionCall(onB, { type: "emit", kind: "progress", data: { pct: 50 } }, MAX_BYTES),
    appendUnchecked(s.c, [{ kind: "note", payload: { refused: true } }]),
    appendUnchecked(s.b, [{ kind: "model_call_started", payload: { activation: 2 } }, started(rows, "u")]),
    transitionCall(onA, { type: "emit", kind: "progress", data: { big: "x".repeat(MAX_BYTES) } }, MAX_BYTES),
    transitionCall(onB, { type: "result", outcome: { status: "ok" }, content: "half" }, MAX_BYTES),
    appendUnchecked(s.a, [{ kind: "note", payload: { n: 2 } }], { epoch: 999 }),
    transitionCall(onA, { type: "finish", outcome: { status: "ok" }, content: "done" }, MAX_BYTES),
    transitionCall(onB, { type: "finish" }, MAX_BYTES),
    transitionCall(onA, { type: "emit", kind: "late", data: {} }, MAX_BYTES),
    appendUnchecked(s.b, [{ kind: "note", payload: { after: rel(-1) } }]),
  ];
}

/** Everything the writes left behind in a session, with ids left out so two runs compare. */
export async function stateOf(sql: Sql, id: string) {
  const records = await sql<
    { seq: number; kind: string; payload: unknown }[]
  >`SELECT seq, kind, payload FROM records WHERE session_id = ${id} ORDER BY seq`;
  const calls = await sql`
    SELECT seq, tool, state, outcome, activation_seq, returned_at IS NOT NULL AS returned, ended_at IS NOT NULL AS ended
    FROM calls WHERE session_id = ${id} ORDER BY seq`;
  const budgets = await sql`
    SELECT activation_seq, model_calls, emitted_bytes FROM activation_budgets WHERE session_id = ${id}`;
  const [session] = await sql`SELECT last_seq FROM sessions WHERE id = ${id}`;
  return { records: [...records], calls: [...calls], budgets: [...budgets], lastSeq: session?.last_seq };
}

/** Results without what differs between runs (timestamps). */
export const comparable = (results: unknown[]) =>
  JSON.parse(JSON.stringify(results, (k, v) => (k === "createdAt" || k === "writtenAt" ? undefined : v)));

/** Submits `ops` so that they commit as one batch: queued while an earlier batch is in flight. */
export async function asOneBatch(w: JournalWriter, ops: WriteOp<unknown>[]): Promise<PromiseSettledResult<unknown>[]> {
  const blocker = w.submit({
    keys: () => ({ sessions: new Map(), hosts: new Set(), releases: new Map() }),
    run: (tx) => tx`SELECT pg_sleep(0.05)`.execute(),
  });
  const results = Promise.allSettled(ops.map((op) => w.submit(op)));
  await blocker;
  return results;
}

/** What the script means, spelled out once (a comparison of two runs would pass if both were wrong). */
export async function expectScriptOutcome(
  sql: Sql,
  s: ScriptSessions,
  results: PromiseSettledResult<unknown>[],
): Promise<void> {
  const [a, b] = [await stateOf(sql, s.a), await stateOf(sql, s.b)];
  const kinds = (x: { records: { kind: string }[] }) => x.records.map((r) => r.kind).slice(3);
  // a: its note and reply (resolved to the note's seq), the over-budget emit and the fenced
  // append left out, its finish, and nothing after it.
  expect(kinds(a)).toEqual(["note", "reply", "tool_result", "tool_call_ended"]);
  expect(a.records[4]!.payload).toEqual({ to: 4 });
  expect(a.calls[0]).toMatchObject({ state: "ended", outcome: { status: "ok" } });
  // b: the emit, its second model call and call, the result, the end, and the note after it.
  expect(kinds(b)).toEqual([
    "progress",
    "model_call_started",
    "tool_call_started",
    "tool_result",
    "tool_call_ended",
    "note",
  ]);
  expect(b.records[8]!.payload).toEqual({ after: 8 });
  expect(b.budgets).toEqual([{ activation_seq: 2, model_calls: 2, emitted_bytes: 48 }]);
  expect((await stateOf(sql, s.c)).lastSeq).toBe(5);
  const values = results.map((r) => (r as PromiseFulfilledResult<unknown>).value);
  expect(values[2]).toEqual({ records: [] });
  expect(values[4]).toMatchObject({ seq: null, overBudget: true });
  expect(values[6]).toEqual({ records: [] });
  expect(values[9]).toMatchObject({ seq: null, overBudget: false });
}
