import { copyFile, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type Sql } from "@aexhq/brain-db/connect";
import { MIGRATIONS_DIR, migrate } from "@aexhq/brain-db/migrate";
import { ensureJournalPartitions, newSessionId, prune } from "@aexhq/brain-db/ops";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from "../../testkit/database.js";

// The journal and the call tables are partitioned by week of session id (migration 0023): a new
// session's rows land in its week, the rows written before the migration stay (the old tables
// became the default partitions), and retention drops a week whole once all its sessions ended
// before the window, leaving a week with a live session to the row-by-row pass.

const DAY = 86_400_000;

async function partitionOf(sql: Sql, table: "records" | "calls", sessionId: string): Promise<string[]> {
  const rows = await sql<{ p: string }[]>`
    SELECT DISTINCT tableoid::regclass::text AS p FROM ${sql(table)} WHERE session_id = ${sessionId}`;
  return rows.map((r) => r.p.replace(/^brain\./, ""));
}

/** A session with a few records and one call, as the journal writer would leave them. */
async function sessionWithJournal(sql: Sql, id: string, ended: Date | null): Promise<void> {
  await sql`
    INSERT INTO sessions (id, model, tools, metadata, last_seq, status, ended_at)
    VALUES (${id}, '{"provider":"scripted"}', '[]', '{}', 3, ${ended ? "ended" : "active"}, ${ended})`;
  await sql`
    INSERT INTO records (session_id, seq, kind, payload) VALUES
      (${id}, 1, 'session_created', '{}'), (${id}, 2, 'tool_call_started', '{}'), (${id}, 3, 'tool_call_ended', '{}')`;
  await sql`
    INSERT INTO calls (session_id, seq, tool, activation_seq, state, executor)
    VALUES (${id}, 2, 't', 1, 'ended', 'none')`;
}

describe("the partitioned journal", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("puts a new session's records and calls in its week's partitions", async () => {
    const id = newSessionId();
    await sessionWithJournal(db.sql, id, null);
    const week = new Date(Math.floor(Date.now() / (7 * DAY)) * 7 * DAY).toISOString().slice(0, 10).replaceAll("-", "");
    expect(await partitionOf(db.sql, "records", id)).toEqual([`records_w${week}`]);
    expect(await partitionOf(db.sql, "calls", id)).toEqual([`calls_w${week}`]);
    // An id of another kind (a session made before 0023) goes to the default partition.
    const old = crypto.randomUUID();
    await sessionWithJournal(db.sql, old, null);
    expect(await partitionOf(db.sql, "records", old)).toEqual(["records_default"]);
  });

  it("keeps partitions ahead, idempotently, with what a default held of a new week moved into it", async () => {
    expect(await ensureJournalPartitions(db.sql)).toBe(0);
    // A week three back, not made yet: a session of it lands in the default partition first.
    const past = newSessionId(Date.now() - 21 * DAY);
    await sessionWithJournal(db.sql, past, null);
    expect(await partitionOf(db.sql, "records", past)).toEqual(["records_default"]);
    expect(await ensureJournalPartitions(db.sql, 8, 3)).toBe(6);
    const [table] = await partitionOf(db.sql, "records", past);
    expect(table).toMatch(/^records_w\d{8}$/);
    expect(await partitionOf(db.sql, "calls", past)).toEqual([table!.replace("records", "calls")]);
    const [n] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM records WHERE session_id = ${past}`;
    expect(n!.n).toBe(3);
  });

  it("retention drops a week whose sessions all ended before the window, and keeps a week with a live one", async () => {
    await ensureJournalPartitions(db.sql, 0, 6);
    const longAgo = new Date(Date.now() - 30 * DAY);
    const gone = [newSessionId(Date.now() - 35 * DAY), newSessionId(Date.now() - 35 * DAY + 1000)];
    for (const id of gone) await sessionWithJournal(db.sql, id, longAgo);
    const kept = newSessionId(Date.now() - 28 * DAY);
    const live = newSessionId(Date.now() - 28 * DAY + 1000);
    await sessionWithJournal(db.sql, kept, longAgo);
    await sessionWithJournal(db.sql, live, null);
    const goneWeek = (await partitionOf(db.sql, "records", gone[0]!))[0]!;
    const liveWeek = (await partitionOf(db.sql, "records", live))[0]!;
    expect(goneWeek).not.toBe(liveWeek);

    const counts = await prune(db.sql, "brain", { olderThanSeconds: 86_400, wait: true });
    expect(counts).toMatchObject({ sessions: 3, records: 9 });
    const exists = async (name: string) =>
      (await db.sql<{ t: string | null }[]>`SELECT to_regclass(${`brain.${name}`})::text AS t`)[0]!.t !== null;
    expect(await exists(goneWeek)).toBe(false);
    expect(await exists(goneWeek.replace("records", "calls"))).toBe(false);
    expect(await exists(liveWeek)).toBe(true);
    // The week with a live session lost its ended session row by row; the live one is whole.
    const left = await db.sql<{ session_id: string; n: number }[]>`
      SELECT session_id, count(*)::int AS n FROM records WHERE session_id IN ${db.sql([...gone, kept, live])}
      GROUP BY session_id`;
    expect(left).toEqual([{ session_id: live, n: 3 }]);
  });
});

describe("a week's drop beside a long query on the journal", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("gives up within its lock timeout, drops nothing, and drops the week once the query is done", async () => {
    await ensureJournalPartitions(db.sql, 0, 6);
    const id = newSessionId(Date.now() - 35 * DAY);
    await sessionWithJournal(db.sql, id, new Date(Date.now() - 30 * DAY));
    const week = (await partitionOf(db.sql, "records", id))[0]!;
    const reader = await db.sql.reserve();
    try {
      await reader`BEGIN`;
      await reader`LOCK TABLE records IN ACCESS SHARE MODE`;
      const started = Date.now();
      // The row-by-row pass waits on nothing the reader holds: it deletes the session instead.
      const counts = await prune(db.sql, "brain", { olderThanSeconds: 86_400, wait: true });
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(counts).toMatchObject({ sessions: 1, records: 3 });
      const [t] = await db.sql<{ t: string | null }[]>`SELECT to_regclass(${`brain.${week}`})::text AS t`;
      expect(t!.t).not.toBeNull();
    } finally {
      await reader`ROLLBACK`;
      reader.release();
    }
    // The week is empty of sessions now: nothing holds it, and the next run drops it.
    await prune(db.sql, "brain", { olderThanSeconds: 86_400, wait: true });
    const [t] = await db.sql<{ t: string | null }[]>`SELECT to_regclass(${`brain.${week}`})::text AS t`;
    expect(t!.t).toBeNull();
  });
});

describe("migration 0023 on an existing journal", () => {
  let db: TestDatabase;
  let dir: string;
  let sql: Sql;
  beforeAll(async () => {
    db = await createEmptyDatabase();
    dir = await mkdtemp(join(tmpdir(), "brain-migrations-"));
    for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith(".sql") && f < "0023")) {
      await copyFile(join(MIGRATIONS_DIR, f), join(dir, f));
    }
    sql = connect(db.url, { schema: "brain", searchPath: true, max: 2, applicationName: "brain-test-partitions" });
  });
  afterAll(async () => {
    await sql?.end();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps every record and call, and the views read them", async () => {
    await migrate(sql, "brain", dir);
    const ids: string[] = Array.from({ length: 20 }, () => crypto.randomUUID());
    // One session of the weeks 0023 makes partitions for: its rows must move there, not be lost.
    ids.push(newSessionId(Date.now() - 1000));
    for (const id of ids) await sessionWithJournal(sql, id, null);
    // A grant on the old table (to everyone, here) is carried to the partitioned one.
    await sql`GRANT SELECT ON records TO PUBLIC`;
    const before = await sql`SELECT session_id, seq, kind, payload FROM journal ORDER BY session_id, seq`;
    const calls = await sql`SELECT * FROM tool_calls ORDER BY session_id, seq`;
    expect(before).toHaveLength(63);

    await migrate(sql, "brain");
    expect(await sql`SELECT session_id, seq, kind, payload FROM journal ORDER BY session_id, seq`).toEqual(before);
    expect(await sql`SELECT * FROM tool_calls ORDER BY session_id, seq`).toEqual(calls);
    const [kind] = await sql<{ kind: string }[]>`
      SELECT c.relkind AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'brain' AND c.relname = 'records'`;
    expect(kind!.kind).toBe("p");
    const [granted] = await sql<{ ok: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM information_schema.role_table_grants
        WHERE table_schema = 'brain' AND table_name = 'records' AND grantee = 'PUBLIC' AND privilege_type = 'SELECT') AS ok`;
    expect(granted!.ok).toBe(true);
    expect(await partitionOf(sql, "records", ids.at(-1)!)).toEqual([expect.stringMatching(/^records_w\d{8}$/)]);
  });
});
