import { loadMigrations } from "@aexhq/brain-db/migrate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmptyDatabase, type TestDatabase } from "../../testkit/database.js";
import { spawnServer } from "../../testkit/server-process.js";
import { until } from "../../testkit/wait.js";
import { brain, json } from "./support.js";

// `brain migrate --citus` and `brain doctor` on a real Citus cluster (BRAIN_TEST_CITUS=1: a
// coordinator and two workers on loopback).

const LATEST = loadMigrations().length;
let db: TestDatabase;
beforeAll(async () => {
  db = await createEmptyDatabase();
});
afterAll(async () => {
  await db?.drop();
});

interface Doctor {
  ok: boolean;
  checks: { check: string; status: string; detail: string }[];
}

describe("brain migrate --citus", () => {
  it("migrates an empty coordinator database and distributes its tables; a second run does nothing", async () => {
    const first = await brain(["migrate", "--citus"], { DATABASE_URL: db.url });
    expect(first.code).toBe(0);
    expect(first.output).toMatch(new RegExp(`^applied 1, 2, .*${LATEST} to schema brain`, "m"));
    expect(first.output).toMatch(/^tables distributed on the Citus cluster$/m);
    const again = await brain(["migrate", "--citus", "--json"], { DATABASE_URL: db.url });
    expect(again.code).toBe(0);
    expect(json(again)).toEqual({ schema: "brain", applied: [], version: LATEST, distributed: false });
    const [row] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_dist_partition WHERE logicalrelid = 'brain.records'::regclass`;
    expect(row?.n).toBe(1);
  });

  it("doctor shows the session shards on both workers, every table placed", async () => {
    const run = await brain(["doctor", "--json"], { DATABASE_URL: db.url });
    const citus = json<Doctor>(run).checks.find((c) => c.check === "citus");
    expect(citus).toMatchObject({ status: "ok" });
    expect(citus?.detail).toMatch(
      /^session shards per worker: 127\.0\.0\.1:\d+ \d+, 127\.0\.0\.1:\d+ \d+; every table placed$/,
    );
  });

  it("a server on it serves, and says at start that retention does not run there", async () => {
    const server = await spawnServer({
      databaseUrl: db.url,
      env: { BRAIN_RETENTION_DAYS: "1", BRAIN_LOG_LEVEL: "warn" },
    });
    try {
      await server.waitForLine(/retention does not run on a Citus cluster yet/, 20_000);
      await until("the server ready", async () => (await fetch(`${server.url}/readyz`)).ok);
    } finally {
      await server.kill();
    }
  });

  it("doctor warns of a table a migration left local", async () => {
    // What a later release's migration would leave behind until brain migrate --citus runs.
    await db.sql`SELECT undistribute_table('brain.tool_model_calls')`;
    const run = await brain(["doctor", "--json"], { DATABASE_URL: db.url });
    const citus = json<Doctor>(run).checks.find((c) => c.check === "citus");
    expect(citus).toMatchObject({ status: "warn", detail: expect.stringContaining("not placed: tool_model_calls") });
    const again = await brain(["migrate", "--citus", "--json"], { DATABASE_URL: db.url });
    expect(json(again)).toMatchObject({ distributed: true });
  });
});
