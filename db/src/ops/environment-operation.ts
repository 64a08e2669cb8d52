import type { RecordPayload } from "@aexhq/brain-contracts";
/** The `environment_operation` record of a ctx.environments operation, with the change it reports. */
import type { TransactionSql } from "postgres";
import { type CommitKeys, emptyKeys, Touch } from "../commit-keys.js";
import { tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";
import { appendRecords } from "./append.js";
import { refuseEmissionIn } from "./refuse-emission.js";

/** One `environment_operation` record and the change it reports, written together. */
export interface EnvironmentOperationWrite<R> {
  sessionId: string;
  call: number;
  hostId: string;
  /**
   * Write nothing unless the call is still open (and keep it open until this commits). Operations
   * whose effect already happened elsewhere (an HTTP request) pass false: the fact is recorded.
   */
  requireOpenCall: boolean;
  /** The change, in the record's transaction (a refusal is a result, not an exception). */
  effect?: (tx: TransactionSql) => Promise<R>;
  /** The record's payload, from the effect's result. */
  payload: (result: R | undefined) => RecordPayload<"environment_operation">;
  /**
   * Charges the record to the activation's emission budget of this many bytes at most; over it,
   * the refusal is recorded instead (like any emission's: see refuseEmission). Only with `requireOpenCall` false:
   * a share lock on the call taken before the budget row would invert transitionCall's lock order.
   */
  maxBytes?: number;
}

export interface EnvironmentOperationResult<R> {
  /** The record's sequence; null when nothing was written. */
  seq: number | null;
  result: R | undefined;
  /** Why nothing was written: the call is not open, or the budget would be exceeded. */
  refused: "call_ended" | "budget_exceeded" | null;
  bytes: number;
}

export const ENVIRONMENT_OPERATION_KIND = "environment_operation";

export function journalEnvironmentOperation<R>(
  w: EnvironmentOperationWrite<R>,
): WriteOp<EnvironmentOperationResult<R>> {
  return {
    exclusive: true,
    keys: (r): CommitKeys => {
      const keys = emptyKeys();
      if (r.seq !== null || r.refused === "budget_exceeded") keys.sessions.set(w.sessionId, Touch.other);
      return keys;
    },
    run: async (tx) => {
      const brain = tables(tx);
      const none = { seq: null, result: undefined, bytes: 0 };
      if (w.requireOpenCall) {
        // A share lock: the call cannot end until this commits, so the record and the change
        // belong to an open call (and its session is active).
        const [call] = await tx<{ state: string }[]>`
          SELECT state FROM ${brain.calls} WHERE session_id = ${w.sessionId} AND seq = ${w.call} AND host_id = ${w.hostId}
          FOR SHARE`;
        if (call?.state !== "running" && call?.state !== "returned") return { ...none, refused: "call_ended" };
      }
      const result = w.effect ? await w.effect(tx) : undefined;
      const payload = w.payload(result);
      const bytes = Buffer.byteLength(ENVIRONMENT_OPERATION_KIND) + Buffer.byteLength(JSON.stringify(payload));
      if (w.maxBytes !== undefined) {
        const charged = await chargeBudget(tx, w.sessionId, w.call, bytes, w.maxBytes);
        if (!charged) {
          await refuseEmissionIn(tx, w.sessionId, w.call, ENVIRONMENT_OPERATION_KIND, bytes);
          return { seq: null, result, bytes, refused: "budget_exceeded" };
        }
      }
      const { records } = await appendRecords(w.sessionId, [{ kind: ENVIRONMENT_OPERATION_KIND, payload }]).run(tx);
      return { seq: records[0]?.seq ?? null, result, bytes, refused: null };
    },
  };
}

/**
 * Adds `bytes` to the budget row of the call's activation unless that would pass `maxBytes`;
 * false when refused (or when the call is gone). Two statements, each routed whole to the
 * session's worker on a Citus cluster (an INSERT fed by a locking CTE is not).
 */
async function chargeBudget(
  tx: TransactionSql,
  sessionId: string,
  call: number,
  bytes: number,
  maxBytes: number,
): Promise<boolean> {
  if (bytes > maxBytes) return false;
  const brain = tables(tx);
  // The session share-locked, as the dropped foreign key did (migration 0014): no budget row for
  // a session deleted meanwhile.
  const [target] = await tx<{ activation_seq: number }[]>`
    SELECT c.activation_seq FROM ${brain.calls} c JOIN ${brain.sessions} x ON x.id = c.session_id
    WHERE c.session_id = ${sessionId} AND x.id = ${sessionId} AND c.seq = ${call}
    FOR KEY SHARE OF x`;
  if (!target) return false;
  const charged = await tx`
    INSERT INTO ${brain.activation_budgets} AS ab (session_id, activation_seq, emitted_bytes)
    VALUES (${sessionId}, ${target.activation_seq}, ${bytes})
    ON CONFLICT (session_id, activation_seq) DO UPDATE SET emitted_bytes = ab.emitted_bytes + excluded.emitted_bytes
    WHERE ab.emitted_bytes + excluded.emitted_bytes <= ${maxBytes}::bigint
    RETURNING 1`;
  return charged.length > 0;
}
