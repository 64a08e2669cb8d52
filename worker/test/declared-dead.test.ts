// A worker that a server declared dead while it was in fact alive (a long pause, a partition): its
// calls were already ended `unknown`, so it stops them, registers again and goes on working.
import { endCalls } from "@aexhq/brain-db/ops";
import { expect, it } from "vitest";
import { until } from "../../testkit/wait.js";
import { callComponent, callRecords, scriptWorker, waitForEnd } from "./support.js";

const { h, worker, log, session } = scriptWorker();

it("stops what it ran, registers under a new id, and runs later calls", async () => {
  const firstId = worker.id;
  const seq = await callComponent(h, session, {
    input: { steps: [{ op: "emit", kind: "started", data: null }, { op: "loop" }] },
  });
  await until("the component to start", async () => (await callRecords(h.db.sql, session, seq)).length > 0);
  // What a server's recovery sweep does to a worker it believes dead.
  await h.db.sql`UPDATE servers SET stopped_at = now() WHERE id = ${firstId}`;
  await h.writer.submit(endCalls({ serverId: firstId }, { status: "unknown", cause: "worker_lost" }));

  await until("the worker to re-register", () => worker.id !== firstId);
  // Stopped as soon as the worker hears its call ended, or at the latest when it finds itself dead.
  await until("the orphaned component to be stopped", () =>
    log.lines.some(
      (l) => l.msg === "component stopped" && l.seq === seq && ["ended", "lost"].includes(l.reason as string),
    ),
  );
  expect((await waitForEnd(h.db.sql, session, seq)).outcome).toEqual({ status: "unknown", cause: "worker_lost" });
  const [row] = await h.db.sql`SELECT kind, stopped_at FROM servers WHERE id = ${worker.id}`;
  expect(row).toMatchObject({ kind: "worker", stopped_at: null });

  const next = await callComponent(h, session, {
    input: { steps: [{ op: "finish", outcome: { status: "ok", value: 3 } }] },
  });
  const ended = await waitForEnd(h.db.sql, session, next);
  expect(ended.outcome).toEqual({ status: "ok", value: 3 });
  const [call] = await h.db.sql`
    SELECT s.id FROM calls c JOIN host_connections hc ON hc.id = c.connection_id JOIN servers s ON s.id = hc.server_id
    WHERE c.session_id = ${session} AND c.seq = ${next}`;
  expect(call!.id).toBe(worker.id);
});
