import { randomUUID } from "node:crypto";
import { declareDeadServers, heartbeat, registerServer } from "@aexhq/brain-db/ops";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";

// A heartbeat is how a server learns it was declared dead while cut off (and must drop what the
// declaration took: its host connections, its calls). It once read the verdict in a CTE beside its
// UPDATE: a beat that waited for a declaration's row lock read the row as its snapshot had it,
// answered "alive", and the server went on holding connections the database had closed (that
// wait: server-heartbeat-wait.test.ts, on one Postgres only, where the wait can be seen). These
// run on a Citus cluster too.

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ max: 4 });
});
afterAll(async () => {
  await db?.drop();
});

/** A judge and a server, both registered; the server silent for `silentFor` when given. */
async function judgeAndServer(silentFor?: string): Promise<{ judge: string; serverId: string }> {
  const judge = randomUUID();
  const serverId = randomUUID();
  await registerServer(db.sql, judge);
  await registerServer(db.sql, serverId);
  if (silentFor !== undefined) {
    await db.sql`UPDATE servers SET heartbeat_at = now() - ${silentFor}::interval WHERE id = ${serverId}`;
  }
  return { judge, serverId };
}

describe("a heartbeat", () => {
  it("answers alive while the server is live, and revived once after it was declared dead", async () => {
    const { judge, serverId } = await judgeAndServer();
    expect((await heartbeat(db.sql, serverId)).verdict).toBe("alive");
    await db.sql`UPDATE servers SET heartbeat_at = now() - interval '1 minute' WHERE id = ${serverId}`;
    expect((await declareDeadServers(db.sql, judge)).map((d) => d.id)).toEqual([serverId]);
    expect((await heartbeat(db.sql, serverId)).verdict).toBe("revived");
    expect((await heartbeat(db.sql, serverId)).verdict).toBe("alive");
    const [row] = await db.sql<{ stopped: boolean }[]>`
      SELECT stopped_at IS NOT NULL AS stopped FROM servers WHERE id = ${serverId}`;
    expect(row?.stopped).toBe(false);
  });

  it("registers the server again when retention removed its row while it was cut off", async () => {
    const { serverId } = await judgeAndServer();
    await db.sql`DELETE FROM servers WHERE id = ${serverId}`;
    const { verdict, at } = await heartbeat(db.sql, serverId);
    expect(verdict).toBe("revived");
    const [row] = await db.sql<{ live: boolean; at: Date; kind: string }[]>`
      SELECT stopped_at IS NULL AS live, heartbeat_at AS at, kind FROM servers WHERE id = ${serverId}`;
    expect(row).toEqual({ live: true, at, kind: "server" });
    expect((await heartbeat(db.sql, serverId)).verdict).toBe("alive");
  });
});

describe("declaring dead", () => {
  it("judges as of the judge's own last beat: a declaration that ran late spares a server that beat then", async () => {
    // Its last beat 5 s ago; the judge's 4.5 s ago, plus a beat interval: 2 s apart, not stale.
    const { judge, serverId } = await judgeAndServer("5 seconds");
    const [row] = await db.sql<{ t: Date }[]>`SELECT now() - interval '3.5 seconds' AS t`;
    const late = await declareDeadServers(db.sql, judge, { judgedAt: row!.t, presumedLiveSince: null });
    expect(late.map((d) => d.id)).not.toContain(serverId);
    expect((await declareDeadServers(db.sql, judge)).map((d) => d.id)).toContain(serverId);
  });
});
