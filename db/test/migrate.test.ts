import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type Sql } from "@aexhq/brain-db/connect";
import { loadMigrations, MIGRATIONS_DIR, migrate } from "@aexhq/brain-db/migrate";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEmptyDatabase, type TestDatabase } from "../../testkit/database.js";

// Two probe migrations after the real ones, each depending on the one before: applied out of
// order, they would fail. They give the ordering and concurrency tests more than one step to race.
const PROBES = [
  "CREATE TABLE probe_a (session_id uuid REFERENCES sessions (id));",
  "ALTER TABLE probe_a ADD COLUMN note text NOT NULL DEFAULT '';",
];

let dirs: { probed: string; tampered: string };
let db: TestDatabase;

beforeAll(async () => {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith(".sql")).sort();
  const probed = await copyMigrations(files);
  const count = loadMigrations().length;
  for (const [i, probe] of PROBES.entries()) {
    await writeFile(join(probed, `${String(count + i + 1).padStart(4, "0")}_probe_${i}.sql`), probe);
  }
  const tampered = await copyMigrations(files);
  const first = join(tampered, files[0] ?? "");
  await writeFile(first, `${await readFile(first, "utf8")}\n-- changed after release\n`);
  dirs = { probed, tampered };
});

afterAll(async () => {
  await rm(dirs.probed, { recursive: true, force: true });
  await rm(dirs.tampered, { recursive: true, force: true });
});

// Every test starts from an empty database of its own.
beforeEach(async () => {
  db = await createEmptyDatabase();
});
afterEach(async () => {
  await db.drop();
});

describe("migrate", () => {
  it("applies every migration in order and records each in <schema>.migrations", async () => {
    const expected = loadMigrations(dirs.probed);
    expect(await migrate(db.sql, "brain", dirs.probed)).toEqual(expected.map((m) => m.version));
    const rows = await db.sql<{ version: number; name: string; checksum: string; applied_at: Date }[]>`
      SELECT version, name, checksum, applied_at FROM brain.migrations ORDER BY version`;
    expect(rows.map(({ version, name, checksum }) => ({ version, name, checksum }))).toEqual(
      expected.map(({ version, name, checksum }) => ({ version, name, checksum })),
    );
    const times = rows.map((r) => r.applied_at.getTime());
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("applies nothing the second time", async () => {
    await migrate(db.sql, "brain");
    const [before] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM brain.migrations`;
    expect(await migrate(db.sql, "brain")).toEqual([]);
    const [after] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM brain.migrations`;
    expect(after?.n).toBe(before?.n);
  });

  it("lets two concurrent migrators on separate pools both succeed, each version applied once", async () => {
    const pools = [pool(db.url, "brain"), pool(db.url, "brain")];
    try {
      const results = await Promise.all(pools.map((sql) => migrate(sql, "brain", dirs.probed)));
      const versions = loadMigrations(dirs.probed).map((m) => m.version);
      expect(results.flat().sort((a, b) => a - b)).toEqual(versions);
      const rows = await db.sql<{ version: number; n: number }[]>`
        SELECT version, count(*)::int AS n FROM brain.migrations GROUP BY version ORDER BY version`;
      expect(rows).toEqual(versions.map((version) => ({ version, n: 1 })));
    } finally {
      await Promise.all(pools.map((sql) => sql.end()));
    }
  });

  it("puts everything in a custom schema and nothing in public", async () => {
    const sql = pool(db.url, "brain_alt");
    try {
      await migrate(sql, "brain_alt");
    } finally {
      await sql.end();
    }
    const tables = await db.sql<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'brain_alt'`;
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(["migrations", "sessions"]));
    const [inPublic] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public'`;
    expect(inPublic?.n).toBe(0);
    const schemas = await db.sql<{ nspname: string }[]>`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'brain%'`;
    expect(schemas.map((s) => s.nspname)).toEqual(["brain_alt"]);
  });

  it("refuses an invalid schema name before touching the database", async () => {
    for (const name of ["Brain", "brain; DROP TABLE x", 'brain"', "", "1brain"]) {
      await expect(migrate(db.sql, name)).rejects.toThrow(/invalid schema name/);
    }
    const schemas = await db.sql`
      SELECT 1 FROM pg_namespace WHERE nspname NOT IN ('public', 'information_schema') AND nspname !~ '^pg_'`;
    expect(schemas).toHaveLength(0);
  });

  it("refuses a migration whose contents changed after it was applied", async () => {
    const applied = await migrate(db.sql, "brain");
    await expect(migrate(db.sql, "brain", dirs.tampered)).rejects.toThrow(/different contents/);
    const rows = await db.sql`SELECT version FROM brain.migrations`;
    expect(rows).toHaveLength(applied.length);
  });
});

function pool(url: string, schema: string): Sql {
  return connect(url, { schema, searchPath: true, max: 2, applicationName: "brain-test-migrate" });
}

async function copyMigrations(files: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "brain-migrations-"));
  for (const f of files) await copyFile(join(MIGRATIONS_DIR, f), join(dir, f));
  return dir;
}
