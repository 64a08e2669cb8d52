// A worker that dies after pg-boss handed it a job but before it claimed the call leaves the call
// pending with no job left to run it. Workers enqueue such calls' jobs again.
import { randomUUID } from "node:crypto";
import { appendUnchecked } from "@aexhq/brain-db/ops";
import { LOST_JOB_SECONDS } from "@aexhq/brain-db/queue";
import { afterAll, expect, it } from "vitest";
import {
  harnessForTests,
  inProcessWorker,
  type RunningWorker,
  scriptSession,
  startActivation,
  waitForEnd,
} from "./support.js";

const h = harnessForTests();
const session = scriptSession(h);
/** Started by the test, once the lost calls are in place. */
let worker: RunningWorker | undefined;

afterAll(async () => {
  await worker?.stop();
});

/** A pending component call whose job never made it (as if its worker died holding it). */
async function orphanedCall(ageSeconds: number): Promise<number> {
  const activation = await startActivation(h, session);
  const { records } = await h.writer.submit(
    appendUnchecked(session, [
      {
        kind: "tool_call_started",
        payload: { tool: "tool", callId: randomUUID(), input: { steps: [{ op: "finish-answers" }] }, activation },
        call: {
          tool: "tool",
          activationSeq: activation,
          hostId: null,
          connectionId: null,
          state: "pending",
          deadlineAt: null,
          executor: "worker",
        },
      },
    ]),
  );
  const seq = records[0]!.seq;
  await h.db.sql`
    UPDATE calls SET started_at = now() - make_interval(secs => ${ageSeconds}) WHERE session_id = ${session} AND seq = ${seq}`;
  return seq;
}

it("enqueues the job of a call left pending past LOST_JOB_SECONDS again, and the call runs once", async () => {
  const lost = await orphanedCall(LOST_JOB_SECONDS + 5);
  const fresh = await orphanedCall(0);
  worker = await inProcessWorker(h);
  const row = await waitForEnd(h.db.sql, session, lost, 30_000);
  expect(row.outcome).toMatchObject({ status: "ok" });
  const [requeued] = await h.db.sql`
    SELECT requeued_at IS NOT NULL AS requeued FROM calls WHERE session_id = ${session} AND seq = ${lost}`;
  expect(requeued!.requeued).toBe(true);
  const results = await h.db.sql`
    SELECT count(*)::int AS n FROM journal
    WHERE session_id = ${session} AND kind = 'tool_result' AND (payload->>'call')::bigint = ${lost}`;
  expect(results[0]!.n).toBe(1);
  // A call that has not waited that long is left to its own job (it has none here: still pending).
  const [young] = await h.db.sql`SELECT state, requeued_at FROM calls WHERE session_id = ${session} AND seq = ${fresh}`;
  expect(young).toMatchObject({ state: "pending", requeued_at: null });
});
