import type { TransactionSql } from "postgres";
import { type CommitKeys, emptyKeys, Touch } from "../commit-keys.js";
import { tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";

export interface RefusedEmission {
  /** How many emissions of this call have been refused, this one included. */
  refused: number;
  /** The emission_rejected record, written for the call's first refusal only. */
  seq: number | null;
}

/**
 * Records one emission refused by the activation's byte budget. A host past its budget may keep
 * emitting; each refusal costs one counter increment on the call (`calls.emissions_refused`,
 * shown by the tool_calls view), and only the first is journaled as `emission_rejected`, so the
 * journal stays bounded while an operator still sees how many were refused. One statement: the
 * call's row is locked before the session's, the order transitionCall takes them in.
 */
export function refuseEmission(sessionId: string, call: number, kind: string, bytes: number): WriteOp<RefusedEmission> {
  const touched = emptyKeys();
  touched.sessions.set(sessionId, Touch.other);
  return {
    notify: touched,
    keys: (r): CommitKeys => (r.seq === null ? emptyKeys() : touched),
    run: (tx) => refuseEmissionIn(tx, sessionId, call, kind, bytes),
  };
}

/**
 * The same statement, inside a transaction another operation already holds. Put on the wire when
 * called (`.then` on the query, not `await`: an awaited query is sent a microtask later, which in
 * a one-round-trip batch is after the NOTIFY and the Sync that commit it; see WriteOp.notify).
 */
export function refuseEmissionIn(
  tx: TransactionSql,
  sessionId: string,
  call: number,
  kind: string,
  bytes: number,
): Promise<RefusedEmission> {
  const brain = tables(tx);
  const payload = JSON.stringify({ call, kind, bytes, code: "budget_exceeded" });
  return tx<{ refused: number | null; seq: number | null }[]>`
    WITH c AS (
      UPDATE ${brain.calls} SET emissions_refused = emissions_refused + 1
      WHERE session_id = ${sessionId} AND seq = ${call}
      RETURNING emissions_refused
    ),
    s AS (
      UPDATE ${brain.sessions} SET last_seq = last_seq + 1
      WHERE id = ${sessionId} AND status = 'active' AND EXISTS (SELECT 1 FROM c WHERE emissions_refused = 1)
      RETURNING last_seq
    ),
    r AS (
      INSERT INTO ${brain.records} (session_id, seq, kind, payload)
      SELECT ${sessionId}, s.last_seq, 'emission_rejected', ${payload}::text::jsonb FROM s
      RETURNING seq
    )
    SELECT (SELECT emissions_refused FROM c) AS refused, (SELECT seq FROM r) AS seq`.then(([row]) => ({
    refused: row?.refused ?? 0,
    seq: row?.seq ?? null,
  }));
}
