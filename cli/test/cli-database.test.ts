import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { loadMigrations } from "@aexhq/brain-db/migrate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand } from "../../testkit/commands.js";
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { TEST_SECRET_KEY } from "../../testkit/secrets.js";
import { LISTENING, REPO_ROOT } from "../../testkit/server-process.js";
import { brain, emptyDataDir, json, spawnBrainCli } from "./support.js";

// Commands that work on the database directly: migrate, prune, sql, usage errors.

/** The schema version the code brings: its last migration's number. */
const LATEST = loadMigrations().length;
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe("brain migrate", () => {
  it("migrates an empty database and installs pg-boss; a second run has nothing to do", async () => {
    const empty = await createEmptyDatabase();
    try {
      const first = await brain(["migrate"], { DATABASE_URL: empty.url });
      expect(first.code).toBe(0);
      expect(first.output).toMatch(
        new RegExp(`^applied 1, 2, .*${LATEST} to schema brain \\(version ${LATEST}\\); pg-boss ready$`, "m"),
      );
      const again = await brain(["migrate", "--json"], { DATABASE_URL: empty.url });
      expect(again.code).toBe(0);
      expect(json(again)).toEqual({ schema: "brain", applied: [], version: LATEST });
      const [boss] = await empty.sql`SELECT to_regclass('brain_boss.version')::text AS t`;
      expect(boss?.t).toBe("brain_boss.version");
    } finally {
      await empty.drop();
    }
  });

  it("--print-sql prints what the database lacks, Brain's and pg-boss's; applied by hand, a role without DDL migrates and serves", async () => {
    const empty = await createEmptyDatabase();
    const role = `brain_app_${randomBytes(4).toString("hex")}`;
    try {
      const printed = await brain(["migrate", "--print-sql"], { DATABASE_URL: empty.url });
      expect(printed.code).toBe(0);
      expect(printed.output).toContain("0009_retention.sql");
      expect(printed.output).toContain("CREATE TABLE brain_boss.job");
      // Printing changed nothing.
      const [none] = await empty.sql`SELECT to_regclass('brain.sessions')::text AS t`;
      expect(none?.t).toBeNull();
      // A multi-statement script, as psql -f would send it (simple protocol, one connection).
      const conn = await empty.sql.reserve();
      await conn.unsafe(printed.output).finally(() => conn.release());
      const nothing = await brain(["migrate", "--print-sql"], { DATABASE_URL: empty.url });
      expect(nothing.output).toMatch(/^-- Brain schema brain: 0 migration\(s\)\.$/m);
      expect(nothing.output).not.toContain("brain_boss");

      // The application's role may not run DDL: migrate, and a server starting, must not need it.
      await empty.sql.unsafe(`CREATE ROLE ${role} LOGIN PASSWORD 'app-password'`);
      await empty.sql.unsafe(`REVOKE CREATE, TEMPORARY ON DATABASE ${empty.name} FROM PUBLIC`);
      await empty.sql.unsafe(`GRANT USAGE ON SCHEMA brain, brain_boss TO ${role};
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA brain, brain_boss TO ${role};
        GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA brain_boss TO ${role}`);
      const app = new URL(empty.url);
      app.username = role;
      app.password = "app-password";
      const asApp = await brain(["migrate", "--json"], { DATABASE_URL: app.toString() });
      expect(asApp.output).not.toMatch(/permission denied/);
      expect(json(asApp)).toEqual({ schema: "brain", applied: [], version: LATEST });
      const server = spawnBrainCli(["start"], {
        DATABASE_URL: app.toString(),
        BRAIN_PORT: "0",
        BRAIN_WORKER: "0",
        BRAIN_API_TOKEN: randomBytes(24).toString("base64url"),
        BRAIN_SECRET_KEY: TEST_SECRET_KEY,
      });
      try {
        await server.waitForLine(LISTENING, 30_000);
      } finally {
        await server.stop();
      }
    } finally {
      await empty.drop();
      await db.sql.unsafe(`DROP ROLE IF EXISTS ${role}`);
    }
    // --all needs no database at all.
    const all = await brain(["migrate", "--print-sql", "--all"], {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
    });
    expect(all.code).toBe(0);
    expect(all.output).toContain("0001_journal.sql");
  });
});

describe("brain migrate --citus", () => {
  it("refuses a database without Citus, applying nothing; and --print-sql, which cannot place tables", async () => {
    const empty = await createEmptyDatabase();
    try {
      const run = await brain(["migrate", "--citus"], { DATABASE_URL: empty.url });
      expect(run.code).toBe(1);
      expect(run.output).toContain("--citus: this database has no citus extension");
      const [schema] = await empty.sql`SELECT to_regnamespace('brain')::text AS s`;
      expect(schema?.s).toBeNull();
      const printed = await brain(["migrate", "--citus", "--print-sql"], { DATABASE_URL: empty.url });
      expect(printed.code).toBe(2);
      expect(printed.output).toContain("--citus places tables on a live cluster");
    } finally {
      await empty.drop();
    }
  });
});

describe("brain prune", () => {
  it("--dry-run counts, a prune deletes, and a bad age is a usage error", async () => {
    const [s] = await db.sql<{ id: string }[]>`
      INSERT INTO sessions (id, status, model, tools, ended_at)
      VALUES (gen_random_uuid(), 'ended', '{}', '[]', now() - interval '10 days') RETURNING id`;
    await db.sql`INSERT INTO records (session_id, seq, kind, payload) VALUES (${s!.id}, 1, 'session_created', '{}')`;
    const dry = await brain(["prune", "--older-than", "7d", "--dry-run", "--json"], { DATABASE_URL: db.url });
    expect(dry.code).toBe(0);
    expect(json(dry)).toMatchObject({ dryRun: true, olderThanSeconds: 7 * 86_400, sessions: 1 });
    expect(await db.sql`SELECT 1 FROM sessions WHERE id = ${s!.id}`).toHaveLength(1);
    // The default age is BRAIN_RETENTION_DAYS: 30 days keeps a session ended 10 days ago.
    const kept = await brain(["prune", "--json"], { DATABASE_URL: db.url });
    expect(json(kept)).toMatchObject({ dryRun: false, olderThanSeconds: 30 * 86_400, sessions: 0 });
    const pruned = await brain(["prune", "--older-than", "7d"], { DATABASE_URL: db.url });
    expect(pruned.code).toBe(0);
    expect(pruned.output).toMatch(/^sessions\s+1$/m);
    expect(await db.sql`SELECT 1 FROM records WHERE session_id = ${s!.id}`).toHaveLength(0);
    const bad = await brain(["prune", "--older-than", "soon"], { DATABASE_URL: db.url });
    expect(bad.code).toBe(2);
    expect(bad.output).toContain("--older-than: a duration like 7d");
  });
});

describe("brain sql", () => {
  it("runs psql on the database with Brain's schema on the search_path", async () => {
    const r = await brain(["sql", "--", "-At", "-c", "SELECT count(*) FROM journal"], { DATABASE_URL: db.url });
    expect(r.code).toBe(0);
    expect(r.output.trim()).toMatch(/^\d+$/);
  });

  it("says so when psql is missing", async () => {
    // An empty directory as the whole PATH: no psql (node itself is spawned by its full path).
    const r = await brain(["sql"], { DATABASE_URL: db.url, PATH: emptyDataDir() });
    expect(r.code).toBe(1);
    expect(r.output).toMatch(/psql is not installed/);
  });
});

describe("usage and failures", () => {
  it("exits 2 on an unknown command or option, 1 when the database cannot be reached", async () => {
    const unknown = await brain(["frobnicate"], { DATABASE_URL: db.url });
    expect(unknown.code).toBe(2);
    expect(unknown.output).toContain("Usage: brain <command>");
    expect((await brain(["calls", "ls", "--bogus"], { DATABASE_URL: db.url })).code).toBe(2);
    expect((await brain(["help"], {})).code).toBe(0);
    // The installed bin (what `npx brain` runs) is linked, executable and has its shebang.
    const bin = await runCommand(join(REPO_ROOT, "node_modules", ".bin", "brain"), ["help"], REPO_ROOT, 30_000);
    expect(bin.code).toBe(0);
    expect(bin.stdout).toMatch(/^Usage: brain <command>/);
    const down = await brain(["calls", "ls"], { DATABASE_URL: "postgres://postgres@127.0.0.1:1/postgres" });
    expect(down.code).toBe(1);
    expect(down.output).toMatch(/^brain: database unreachable/m);
  });
});
