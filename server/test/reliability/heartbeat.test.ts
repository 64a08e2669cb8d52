import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Brain } from "@aexhq/brain";
import { registerServer, SERVER_STALE_SECONDS, stopServer } from "@aexhq/brain-db/ops";
import { describe, expect, it } from "vitest";
import { startBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { until } from "../../../testkit/wait.js";

// A server's heartbeat is what tells the others it is alive: a heartbeat older than the stale
// window lets another server claim its sessions (fencing its Agentloops in the middle of their
// model calls) and declare it dead (ending its dispatched calls unknown). The recovery sweep can
// run for longer than that window; the heartbeat must not wait for it.

const x = startedBeforeAll(() => startBrain());

describe("the heartbeat", () => {
  it("keeps beating while the recovery sweep is held up past the stale window", async () => {
    const sql = x.db.sql;
    const serverId = x.app.brain.serverId;
    const client = new Brain({ url: x.url, token: x.token });
    try {
      const session = await client.sessions.create({ model: { provider: "scripted", script: [{ text: "hi" }] } });
      // The session belongs to another server, alive for now.
      const other = randomUUID();
      await registerServer(sql, other);
      await sql`UPDATE sessions SET owner_id = ${other} WHERE id = ${session.id}`;
      const lock = await sql.reserve();
      try {
        // Its row locked first, then its owner gone: the sweep finds an orphan whose claim waits.
        await lock`BEGIN`;
        await lock`SELECT 1 FROM sessions WHERE id = ${session.id} FOR UPDATE`;
        await stopServer(sql, other);
        await until("the sweep waiting on the session's row", async () => {
          const [w] = await sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%owner_epoch + 1%'`;
          return w!.n > 0;
        });
        // The sweep stays held for longer than the stale window; the heartbeat never gets that old.
        let oldest = 0;
        const end = Date.now() + (SERVER_STALE_SECONDS + 1.5) * 1000;
        while (Date.now() < end) {
          const [row] = await sql<{ age: number }[]>`
            SELECT extract(epoch FROM clock_timestamp() - heartbeat_at)::float8 AS age FROM servers WHERE id = ${serverId}`;
          oldest = Math.max(oldest, row!.age);
          await sleep(200);
        }
        expect(oldest).toBeLessThan(SERVER_STALE_SECONDS);
      } finally {
        await lock`ROLLBACK`.catch(() => {});
        lock.release();
      }
      // Let go, the sweep goes on: the orphan is this server's.
      await until("the orphan claimed", async () => {
        const [row] = await sql<{ owner_id: string | null }[]>`SELECT owner_id FROM sessions WHERE id = ${session.id}`;
        return row!.owner_id === serverId;
      });
    } finally {
      await client.close();
    }
  });
});
