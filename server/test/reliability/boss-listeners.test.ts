// Postgres wakes every listening backend of a database on every notifying commit, whatever its
// channel: each journal commit (a NOTIFY of its keys) woke the server's pg-boss listener too,
// though the server works only the deadline queue, which is polled. Only the worker, which works
// the notifying queue of component and HTTP calls, keeps pg-boss's LISTEN.
import { expect, it } from "vitest";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { until } from "../../../testkit/wait.js";

it("only the worker's pg-boss listens for jobs; the server's does not", { timeout: 60_000 }, async () => {
  const both = await startBrainWithWorker();
  try {
    // pg-boss's listener: its LISTEN, or the heartbeat that checks it every 10 s.
    const listening = async () => {
      const [row] = await both.brain.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'brain-boss'
          AND (query ILIKE 'LISTEN %' OR query LIKE '%pg_listening_channels()%')`;
      return row!.n;
    };
    // The server started first, so a listener of its own would be there before the worker's.
    expect(await until("the worker's pg-boss listener", async () => (await listening()) || undefined, 15_000)).toBe(1);
    await both.worker.stop();
    await until("the worker's listener to go", async () => (await listening()) === 0, 15_000);
  } finally {
    await both.close();
  }
});
