import { derivePool } from "@aexhq/brain-db/connect";
import { bossDatabase } from "@aexhq/brain-db/queue";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { deferred, within } from "../../testkit/wait.js";

// pg-boss's statements on Brain's driver (db/src/boss-db.ts): what its adapter must answer as
// `pg` would, since pg-boss relies on it.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe("pg-boss's database adapter", () => {
  it("answers a multi-statement query with the rows of every statement (pg-boss's claims read both)", async () => {
    const boss = bossDatabase(db.sql);
    const { rows } = await boss.executeSql("SELECT 1 AS lock; SELECT 2 AS claimed");
    expect(rows).toEqual([{ lock: 1 }, { claimed: 2 }]);
    expect((await boss.executeSql("SELECT $1::int AS n", [7])).rows).toEqual([{ n: 7 }]);
  });

  it("sends parameters as pg would: arrays as array literals, objects as JSON (pg-boss is written for pg)", async () => {
    const boss = bossDatabase(db.sql);
    const names = ["a", 'q"uote', "back\\slash", null];
    const { rows } = await boss.executeSql(
      "SELECT $1::text[] AS names, ($1::text[])[4] IS NULL AS last_null, $2::jsonb AS data, $3::int AS n",
      [names, { k: [1, "two"] }, 7],
    );
    expect(rows).toMatchObject([{ last_null: true, data: { k: [1, "two"] }, n: 7 }]);
    expect((rows[0] as { names: string[] }).names.slice(0, 3)).toEqual(names.slice(0, 3));
  });

  it("runs a script that is its own transaction (pg-boss's installs) on a pooled connection", async () => {
    const boss = bossDatabase(db.sql);
    await boss.executeSql(
      "BEGIN; CREATE TABLE public.boss_probe (x int); INSERT INTO public.boss_probe VALUES (1); COMMIT;",
    );
    expect((await boss.executeSql("SELECT x FROM public.boss_probe")).rows).toEqual([{ x: 1 }]);
    await boss.executeSql("DROP TABLE public.boss_probe");
  });

  it("listens on the driver's own LISTEN connection, until closed", async () => {
    const pool = derivePool(db.sql, "brain-boss-test", 2);
    try {
      const boss = bossDatabase(pool);
      const heard = deferred<string>();
      const handle = await boss.listen!(
        "boss_probe",
        (payload) => heard.resolve(payload),
        () => {},
      );
      await db.sql`SELECT pg_notify('boss_probe', 'hello')`;
      expect(await within(heard.promise, "the notification")).toBe("hello");
      await handle.close();
    } finally {
      await pool.end({ timeout: 1 });
    }
  });
});
