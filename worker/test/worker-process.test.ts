// `npm run worker` as a real process: it needs only DATABASE_URL; a SIGKILL mid-invocation leaves
// the call to the recovery sweep (`unknown`, `worker_lost`) and nobody runs it again; SIGTERM stops
// it cleanly; a deadline stops a looping component without harming the process.
import { endCalls } from "@aexhq/brain-db/ops";
import { WORKER_QUEUE } from "@aexhq/brain-db/queue";
import { expect, it } from "vitest";
import { spawnNode } from "../../testkit/server-process.js";
import { until } from "../../testkit/wait.js";
import {
  callComponent,
  callRecords,
  callRow,
  harnessForTests,
  SHARED_CACHE,
  scriptSession,
  spawnWorkerProcess,
  waitForEnd,
} from "./support.js";

const h = harnessForTests();
const session = scriptSession(h);

const spawnWorker = () => spawnWorkerProcess(h.db.url);

/** What server/src/recovery.ts does for a worker whose heartbeat went stale. */
async function sweepDeadWorker(workerId: string): Promise<void> {
  await until(
    "the worker's heartbeat to go stale",
    async () => {
      const dead = await h.db.sql`
        UPDATE servers SET stopped_at = now()
        WHERE id = ${workerId} AND stopped_at IS NULL AND heartbeat_at < now() - make_interval(secs => 3)
        RETURNING kind`;
      return dead.length > 0 && dead[0]!.kind === "worker";
    },
    15_000,
  );
  await h.writer.submit(endCalls({ serverId: workerId }, { status: "unknown", cause: "worker_lost" }));
}

it("prints its banner once consuming, needing nothing but DATABASE_URL", async () => {
  const { proc, id } = await spawnWorker();
  try {
    const [row] = await h.db.sql`SELECT kind, stopped_at FROM servers WHERE id = ${id}`;
    expect(row).toMatchObject({ kind: "worker", stopped_at: null });
  } finally {
    await proc.stop();
  }
  // SIGTERM: a clean stop, its row marked stopped.
  expect(await proc.exited).toEqual({ code: 0, signal: null });
  const [row] = await h.db.sql`SELECT stopped_at FROM servers WHERE id = ${id}`;
  expect(row!.stopped_at).not.toBeNull();
});

it("a SIGTERM during startup, or the instant the banner is read, still stops it cleanly", async () => {
  // Handlers are installed before anything starts: a signal that found none would kill the process
  // by default (exit by signal, its row never marked stopped). Signalled while it registers itself:
  const before = new Date();
  const early = spawnNode("worker/dist/main.js", {
    env: { DATABASE_URL: h.db.url, BRAIN_WORKER_CACHE_DIR: SHARED_CACHE, BRAIN_LOG_LEVEL: "warn" },
  });
  const registered = await until(
    "the worker to register itself",
    async () => {
      const rows = await h.db.sql<{ id: string }[]>`
        SELECT id FROM servers WHERE kind = 'worker' AND started_at >= ${before} AND stopped_at IS NULL`;
      return rows[0]?.id;
    },
    30_000,
  );
  await early.kill("SIGTERM");
  expect(await early.exited).toEqual({ code: 0, signal: null });
  const [row] = await h.db.sql`SELECT stopped_at FROM servers WHERE id = ${registered}`;
  expect(row!.stopped_at).not.toBeNull();
  // Signalled the moment its banner is read, several at once (a loaded machine widens the window).
  const many = await Promise.all([0, 1, 2].map(() => spawnWorker()));
  await Promise.all(many.map(({ proc }) => proc.kill("SIGTERM")));
  for (const { proc } of many) expect(await proc.exited).toEqual({ code: 0, signal: null });
});

it("a worker killed mid-invocation leaves the call to the recovery sweep, and it never runs again", async () => {
  const first = await spawnWorker();
  const seq = await callComponent(h, session, {
    input: { steps: [{ op: "emit", kind: "started", data: null }, { op: "loop" }] },
  });
  await until("the component to start", async () => (await callRecords(h.db.sql, session, seq)).length > 0);
  await first.proc.kill("SIGKILL");

  // Until a sweep declares the worker dead, the call is running (on its connection).
  expect((await callRow(h.db.sql, session, seq)).state).toBe("running");
  await sweepDeadWorker(first.id);
  const row = await waitForEnd(h.db.sql, session, seq);
  expect(row.outcome).toEqual({ status: "unknown", cause: "worker_lost" });

  // A restarted worker, even handed the same job again, runs nothing of it.
  const second = await spawnWorker();
  try {
    const jobId = await h.boss.send(WORKER_QUEUE, { sessionId: session, seq });
    await until("the repeated job to be consumed", async () => {
      const job = await h.boss.getJobById(WORKER_QUEUE, jobId!);
      return job?.state === "completed";
    });
    expect((await callRecords(h.db.sql, session, seq)).map((r) => r.kind)).toEqual(["started", "tool_call_ended"]);
    expect((await callRow(h.db.sql, session, seq)).outcome).toEqual({ status: "unknown", cause: "worker_lost" });
  } finally {
    await second.proc.stop();
  }
});

it("a deadline stops a looping component in a worker process, which stays healthy", async () => {
  const { proc } = await spawnWorker();
  try {
    const looping = await callComponent(h, session, {
      deadline: Date.now() + 1000,
      input: { steps: [{ op: "loop" }] },
    });
    expect((await waitForEnd(h.db.sql, session, looping)).outcome).toEqual({ status: "timeout", cause: "deadline" });
    const next = await callComponent(h, session, {
      input: { steps: [{ op: "finish", outcome: { status: "ok", value: 2 } }] },
    });
    expect((await waitForEnd(h.db.sql, session, next)).outcome).toEqual({ status: "ok", value: 2 });
  } finally {
    await proc.stop();
  }
});

it("SIGTERM mid-invocation ends the interrupted call unknown and exits cleanly", async () => {
  const { proc, id } = await spawnWorker();
  const seq = await callComponent(h, session, {
    input: { steps: [{ op: "emit", kind: "started", data: null }, { op: "loop" }] },
  });
  await until("the component to start", async () => (await callRecords(h.db.sql, session, seq)).length > 0);
  await proc.stop();
  expect((await proc.exited).code).toBe(0);
  expect((await callRow(h.db.sql, session, seq)).outcome).toEqual({ status: "unknown", cause: "worker_lost" });
  const [row] = await h.db.sql`SELECT stopped_at FROM servers WHERE id = ${id}`;
  expect(row!.stopped_at).not.toBeNull();
});
