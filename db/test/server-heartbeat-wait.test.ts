import { randomUUID } from "node:crypto";
import { declareDeadServers, heartbeat, registerServer } from "@aexhq/brain-db/ops";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { deferred, untilLockWait } from "../../testkit/wait.js";

// A heartbeat that waited for a declaration's row lock must answer "revived" (see
// server-heartbeat.test.ts). The wait is staged and seen in pg_stat_activity, which on a Citus
// cluster shows it on a worker: this file runs on one Postgres.

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ max: 4 });
});
afterAll(async () => {
  await db?.drop();
});

describe("a heartbeat", () => {
  it("answers revived when it waited for a declaration that committed meanwhile", async () => {
    const judge = randomUUID();
    const serverId = randomUUID();
    await registerServer(db.sql, judge);
    await registerServer(db.sql, serverId);
    await db.sql`UPDATE servers SET heartbeat_at = now() - interval '1 minute' WHERE id = ${serverId}`;
    const declared = deferred();
    const release = deferred();
    const tx = db.sql.begin(async (t) => {
      const dead = await declareDeadServers(t as unknown as typeof db.sql, judge);
      expect(dead.map((d) => d.id)).toContain(serverId);
      declared.resolve();
      await release.promise;
    });
    await declared.promise;
    const beat = heartbeat(db.sql, serverId);
    // The beat started before the declaration committed: it waits for the declaration's row lock.
    await untilLockWait(db.sql, "the heartbeat to wait for the declaration");
    release.resolve();
    await tx;
    expect((await beat).verdict).toBe("revived");
    expect((await heartbeat(db.sql, serverId)).verdict).toBe("alive");
  }, 30_000);
});
