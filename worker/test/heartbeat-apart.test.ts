// A worker's heartbeat beats on its own timer, never behind its periodic work: a requeue (or a
// journal repair) waiting on a lock must not silence it, or a server would judge the live worker
// dead and end its running calls `unknown`.
import { expect, it } from "vitest";
import { until } from "../../testkit/wait.js";
import { harnessForTests, workerForTests } from "./support.js";

const h = harnessForTests();
const { worker } = workerForTests(h);

it("keeps beating while its periodic requeue of lost jobs waits on a lock", async () => {
  const beatAt = async () => {
    const [row] = await h.db.sql<{ at: Date }[]>`SELECT heartbeat_at AS at FROM servers WHERE id = ${worker.id}`;
    return row!.at.getTime();
  };
  const lock = await h.db.sql.reserve();
  try {
    // The requeue (every fifth tick) updates `calls`: a SHARE lock holds it up; beats touch
    // only `servers`.
    await lock`BEGIN`;
    await lock`LOCK TABLE calls IN SHARE MODE`;
    const [row] = await lock<{ t: Date }[]>`SELECT now() AS t`;
    const lockedAt = row!.t.getTime();
    // Past the fifth tick, with a beat interval to spare: the requeue is waiting by then.
    await until("a beat 7 s into the lock", async () => (await beatAt()) > lockedAt + 7_000, 30_000);
    const [waiting] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%requeued_at%'`;
    expect(waiting!.n).toBe(1);
  } finally {
    await lock`ROLLBACK`.catch(() => {});
    lock.release();
  }
}, 60_000);
