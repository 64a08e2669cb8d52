import { connect, connectToRole, type Sql } from "@aexhq/brain-db/connect";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { until } from "../../testkit/wait.js";

// A DBA's idle_session_timeout (on the role or the database): Postgres ends a connection idle that
// long, with a FATAL error, and a query sent on it at that moment fails. A pool made by
// connectToRole closes its idle connections first, so Postgres never has to.

let db: TestDatabase;
let admin: postgres.Sql;

beforeAll(async () => {
  db = await createTestDatabase();
  admin = postgres(inject("brainAdminUrl"), { max: 1, onnotice: () => {} });
  await admin.unsafe(`ALTER DATABASE ${db.name} SET idle_session_timeout = '2s'`);
});

afterAll(async () => {
  await admin?.end({ timeout: 1 });
  await db?.drop();
});

/** Sessions of the test's database that Postgres ended with a FATAL error (Postgres 14+). */
async function endedByPostgres(): Promise<number> {
  const [row] = await admin<{ n: number }[]>`
    SELECT sessions_fatal::int AS n FROM pg_stat_database WHERE datname = ${db.name}`;
  return row!.n;
}

/** Runs a query on the pool, then waits until its backend is gone; how many Postgres ended meanwhile. */
async function idleOut(pool: Sql): Promise<number> {
  const before = await endedByPostgres();
  const [me] = await pool<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  await until(
    "the idle connection to close",
    async () => (await admin`SELECT 1 FROM pg_stat_activity WHERE pid = ${me!.pid}`).length === 0,
    30_000,
  );
  return (await endedByPostgres()) - before;
}

describe("a role's idle_session_timeout", () => {
  it("ends a plain pool's idle connection from the server's side", async () => {
    const plain = connect(db.url, { schema: "brain", max: 1, applicationName: "brain-plain" });
    try {
      expect(await idleOut(plain)).toBe(1);
    } finally {
      await plain.end({ timeout: 1 });
    }
  });

  it("never has to end connectToRole's: the pool closes them first, and goes on working", async () => {
    const fitted = await connectToRole(db.url, { schema: "brain", max: 2, applicationName: "brain-fitted" });
    try {
      expect(await idleOut(fitted)).toBe(0);
      await expect(fitted`SELECT 1 AS one`).resolves.toEqual([{ one: 1 }]);
    } finally {
      await fitted.end({ timeout: 1 });
    }
  });
});
