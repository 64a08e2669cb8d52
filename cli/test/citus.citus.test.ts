import { randomUUID } from "node:crypto";
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

/** A session with two records, written straight into the placed tables; its id. */
async function journal(db: TestDatabase): Promise<string> {
  const id = randomUUID();
  await db.sql`INSERT INTO sessions (id, model, tools, last_seq) VALUES (${id}, '{}', '[]', 2)`;
  await db.sql`INSERT INTO records (session_id, seq, kind, payload) VALUES (${id}, 1, 'note', '{}'), (${id}, 2, 'note', '{}')`;
  return id;
}

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

  it("brain prune deletes the ended sessions past the window with their journals, each apart", async () => {
    const [old1, old2, recent, active] = [await journal(db), await journal(db), await journal(db), await journal(db)];
    await db.sql`UPDATE sessions SET status = 'ended', ended_at = now() - interval '3 days' WHERE id IN (${old1}, ${old2})`;
    await db.sql`UPDATE sessions SET status = 'ended', ended_at = now() WHERE id = ${recent}`;
    const dry = await brain(["prune", "--older-than", "1d", "--dry-run", "--json"], { DATABASE_URL: db.url });
    expect(dry.code).toBe(0);
    expect(json(dry)).toMatchObject({ dryRun: true, sessions: 2, records: 4, hosts: 0, servers: 0 });
    const run = await brain(["prune", "--older-than", "1d", "--json"], { DATABASE_URL: db.url });
    expect(run.code).toBe(0);
    expect(json(run)).toMatchObject({ dryRun: false, sessions: 2, records: 4 });
    const left = await db.sql<{ id: string; records: number }[]>`
      SELECT s.id, (SELECT count(*)::int FROM records r WHERE r.session_id = s.id) AS records FROM sessions s
      WHERE s.id IN (${old1}, ${old2}, ${recent}, ${active}) ORDER BY s.id`;
    expect(left).toEqual(
      [
        { id: recent, records: 2 },
        { id: active, records: 2 },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
    const [orphans] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM records WHERE session_id IN (${old1}, ${old2})`;
    expect(orphans?.n).toBe(0);
  });

  it("a server on it serves, and its retention deletes an expired session", async () => {
    const old = await journal(db);
    await db.sql`UPDATE sessions SET status = 'ended', ended_at = now() - interval '3 days' WHERE id = ${old}`;
    const server = await spawnServer({
      databaseUrl: db.url,
      env: { BRAIN_RETENTION_DAYS: "1", BRAIN_LOG_LEVEL: "warn" },
    });
    try {
      await until("the server ready", async () => (await fetch(`${server.url}/readyz`)).ok);
      // Its first prune runs within 5 s of its start.
      await until("the expired session pruned", async () => {
        const rows = await db.sql`SELECT 1 FROM sessions WHERE id = ${old}`;
        return rows.length === 0;
      });
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
