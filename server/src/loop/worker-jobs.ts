import type { AppendResult, NewRecord } from "@aexhq/brain-db/ops";
import { enqueueWorkerJob } from "@aexhq/brain-db/queue";
import type { WriteOp } from "@aexhq/brain-db/writer";
import type { PgBoss } from "pg-boss";

/**
 * Component calls reach workers as pg-boss jobs committed in the same transaction as their
 * tool_call_started: the job exists if and only if the call does. Jobs are inserted after the
 * append statement has assigned the calls' sequences, still inside its transaction, each in the
 * group of the session's owner (see enqueueWorkerJob).
 */
export function withWorkerJobs(
  boss: PgBoss,
  session: { id: string; tokenId: string | null },
  records: NewRecord[],
  op: WriteOp<AppendResult>,
): WriteOp<AppendResult> {
  // A call waiting at an approval gate gets its job when it is approved (approveCall).
  const component = records.map((r) => r.call?.executor === "worker" && r.call.state === "pending");
  if (!component.includes(true)) return op;
  return {
    keys: op.keys,
    exclusive: op.exclusive,
    ...(op.written ? { written: (result: AppendResult) => op.written!(result) } : {}),
    run: (tx) =>
      op.run(tx).then(async (result) => {
        const seqs = result.records.filter((_, i) => component[i]).map((r) => r.seq);
        await Promise.all(
          seqs.map((seq) => enqueueWorkerJob(boss, tx, { sessionId: session.id, seq }, session.tokenId)),
        );
        return result;
      }),
  };
}
