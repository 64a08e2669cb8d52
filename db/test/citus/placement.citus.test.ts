import { randomUUID } from "node:crypto";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@aexhq/brain-db/connect";
import {
  DISTRIBUTED,
  loadMigrations,
  MIGRATIONS_DIR,
  migrate,
  placedOnCitus,
  placeOnCitus,
  REFERENCE,
} from "@aexhq/brain-db/migrate";
import {
  appendUnchecked,
  ensureJournalPartitions,
  insertEnvironment,
  registerServer,
  replaceEnvironment,
} from "@aexhq/brain-db/ops";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmptyDatabase, type TestDatabase } from "../../../testkit/database.js";
import { bareSession, runAlone } from "../../../testkit/session-rows.js";

// Brain's tables on a real Citus cluster (a coordinator and two workers on loopback, started by
// testkit/global-setup.ts with BRAIN_TEST_CITUS=1): placed by `placeOnCitus` (db/src/citus.ts).

interface Placed {
  name: string;
  method: string;
  colocation: number;
}

async function placement(db: TestDatabase): Promise<Map<string, Placed>> {
  const rows = await db.sql<Placed[]>`
    SELECT c.relname AS name, p.partmethod::text AS method, p.colocationid AS colocation
    FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
    WHERE c.relnamespace = 'brain'::regnamespace AND NOT c.relispartition`;
  return new Map(rows.map((r) => [r.name, r]));
}

/** Rows per table of the session's journal, counted through the coordinator. */
async function counts(db: TestDatabase) {
  const [row] = await db.sql<{ sessions: number; records: number; calls: number; budgets: number }[]>`
    SELECT (SELECT count(*)::int FROM sessions) AS sessions, (SELECT count(*)::int FROM records) AS records,
           (SELECT count(*)::int FROM calls) AS calls, (SELECT count(*)::int FROM activation_budgets) AS budgets`;
  return row;
}

/** `n` sessions with a few records and a tool call each, written while the tables are local. */
async function journals(db: TestDatabase, n: number): Promise<{ hostId: string; ownerId: string; ids: string[] }> {
  const hostId = randomUUID();
  const ownerId = randomUUID();
  await db.sql`INSERT INTO hosts (id, token_hash) VALUES (${hostId}, '\\x00')`;
  await registerServer(db.sql, ownerId);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = randomUUID();
    ids.push(id);
    await runAlone(db.sql, bareSession(id, hostId, ownerId));
    const call = {
      tool: "lookup",
      activationSeq: null,
      hostId,
      connectionId: null,
      state: "pending" as const,
      deadlineAt: null,
    };
    await runAlone(
      db.sql,
      appendUnchecked(id, [
        { kind: "user_message", payload: { text: `hello ${i}` } },
        { kind: "tool_call_started", payload: { tool: "lookup", input: { i } }, call },
      ]),
    );
  }
  return { hostId, ownerId, ids };
}

let db: TestDatabase;
beforeAll(async () => {
  // An install made before Citus: migrated with its tables local, then given a journal.
  db = await createEmptyDatabase();
  await migrate(db.sql, "brain");
});
afterAll(async () => {
  await db?.drop();
});

describe("placeOnCitus", () => {
  it("distributes an existing install's journal by session, co-located, without losing a row", async () => {
    const { ids } = await journals(db, 12);
    const before = await counts(db);
    expect(before).toEqual({ sessions: 12, records: 36, calls: 12, budgets: 0 });
    expect(await placedOnCitus(db.sql, "brain")).toBe(false);

    expect(await placeOnCitus(db.sql, "brain")).toBe(true);

    const placed = await placement(db);
    const sessions = placed.get("sessions");
    expect(sessions?.method).toBe("h");
    for (const table of DISTRIBUTED) {
      expect({ table, ...placed.get(table) }).toEqual({
        table,
        name: table,
        method: "h",
        colocation: sessions?.colocation,
      });
    }
    for (const table of REFERENCE) expect({ table, method: placed.get(table)?.method }).toEqual({ table, method: "n" });
    // pg-boss's tables, the migrations, the writer's marks and idempotency keys stay on the coordinator.
    for (const table of ["migrations", "writer_marks", "idempotency_keys"]) expect(placed.has(table)).toBe(false);
    expect(await counts(db)).toEqual(before);
    // Each session's rows are in its shard: read by session id, routed to one worker.
    const [one] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM records WHERE session_id = ${ids[3]!}`;
    expect(one?.n).toBe(3);
    // The shards are spread over both workers.
    const nodes = await db.sql<{ nodeport: number }[]>`
      SELECT DISTINCT nodeport FROM citus_shards WHERE table_name = 'brain.sessions'::regclass`;
    expect(nodes.length).toBe(2);
  });

  it("is idempotent: run again, it places nothing, and brings the writes' delegation up to date", async () => {
    expect(await placedOnCitus(db.sql, "brain")).toBe(true);
    // An earlier release's body of the function the writes are delegated through.
    await db.sql.unsafe(`CREATE OR REPLACE FUNCTION brain.on_session_shards(p_session uuid, p_statement text,
      p_parameters text[]) RETURNS SETOF record LANGUAGE plpgsql AS $$ BEGIN RETURN; END $$`);
    expect(await placeOnCitus(db.sql, "brain")).toBe(false);
    const [fn] = await db.sql<{ body: string }[]>`
      SELECT prosrc AS body FROM pg_proc WHERE oid = 'brain.on_session_shards(uuid,text,text[])'::regprocedure`;
    expect(fn?.body).toContain("PREPARE");
  });

  it("two migrators at once: one places the tables, the other waits on the migration lock and finds them placed", async () => {
    const other = await createEmptyDatabase();
    await migrate(other.sql, "brain");
    const second = connect(other.directUrl, { schema: "brain", max: 1 });
    try {
      const results = await Promise.all([placeOnCitus(other.sql, "brain"), placeOnCitus(second, "brain")]);
      expect(results.sort()).toEqual([false, true]);
      expect(await placedOnCitus(other.sql, "brain")).toBe(true);
    } finally {
      await second.end({ timeout: 1 });
      await other.drop();
    }
  });

  it("makes the journal's weekly partitions after placement distributed, in their table's shards", async () => {
    const made = await ensureJournalPartitions(db.sql, 12);
    expect(made).toBeGreaterThan(0);
    const local = await db.sql`
      SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent IN ('brain.records'::regclass, 'brain.calls'::regclass)
        AND NOT EXISTS (SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = c.oid)`;
    expect(local).toEqual([]);
  });

  it("checks a session's references with foreign keys to reference tables, as migration 0016's triggers did", async () => {
    const triggers = await db.sql`
      SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgrelid IN
        ('brain.sessions'::regclass, 'brain.hosts'::regclass, 'brain.servers'::regclass, 'brain.app_tokens'::regclass)`;
    expect(triggers).toEqual([]);
    const ownerId = randomUUID();
    await registerServer(db.sql, ownerId);
    const missing = runAlone(db.sql, bareSession(randomUUID(), randomUUID(), ownerId));
    // The worker's error names the shard's constraint (sessions_host_id_fkey_<shard>).
    await expect(missing).rejects.toMatchObject({
      code: "23503",
      message: expect.stringContaining("sessions_host_id_fkey"),
    });
    const [named] = await db.sql<{ host_id: string }[]>`SELECT host_id FROM sessions LIMIT 1`;
    await expect(db.sql`DELETE FROM hosts WHERE id = ${named!.host_id}`).rejects.toMatchObject({ code: "23503" });
  });

  it("migrates a placed install on: a later release's migrations reach every shard", async () => {
    // The install placed by a release whose last migration was 0024.
    const older = mkdtempSync(join(tmpdir(), "brain-migrations-"));
    const all = loadMigrations();
    for (const m of all.filter((m) => m.version < 25)) cpSync(join(MIGRATIONS_DIR, m.name), join(older, m.name));
    const other = await createEmptyDatabase();
    try {
      await migrate(other.sql, "brain", older);
      expect(await placeOnCitus(other.sql, "brain")).toBe(true);
      const { ids } = await journals(other, 2);
      expect(await migrate(other.sql, "brain")).toEqual(all.filter((m) => m.version >= 25).map((m) => m.version));
      // Migration 0025's column, used where the session's shard is.
      await other.sql.begin(async (tx) => {
        const config = { baseUrl: "http://127.0.0.1:1", headerNames: [] };
        expect(await insertEnvironment(tx, ids[1]!, { name: "e", config, headers: null })).toBe("created");
        await replaceEnvironment(tx, ids[1]!, "e", config, undefined);
      });
      const [row] = await other.sql<{ revision: string }[]>`
        SELECT revision::text FROM environments WHERE session_id = ${ids[1]!} AND name = 'e'`;
      expect(row?.revision).toBe("1");
    } finally {
      rmSync(older, { recursive: true, force: true });
      await other.drop();
    }
  });
});
