import { describe, expect, inject, it } from "vitest";
import { adminSql } from "../src/runner/database.js";
import { ScenarioDatabases } from "../src/runner/scenario-database.js";

// Every scenario run measures on a database of its own: what one scenario leaves (active
// sessions a later server would resume, grown journals) must not reach the next.
const adminUrl = inject("brainAdminUrl");

async function exists(name: string): Promise<boolean> {
  const admin = adminSql(adminUrl);
  try {
    const rows = await admin`SELECT 1 FROM pg_database WHERE datname = ${name}`;
    return rows.length > 0;
  } finally {
    await admin.end();
  }
}

describe("a database per scenario run", () => {
  const databases = new ScenarioDatabases(adminUrl, { keep: false, pgStatStatements: false, log: () => {} });

  it("gives each run a fresh database and drops it afterwards, also when the run fails", async () => {
    const first = await databases.with(async (db) => {
      await db.sql`CREATE TABLE left_behind (x int)`;
      expect(await exists(db.name)).toBe(true);
      return db.name;
    });
    expect(await exists(first)).toBe(false);
    let failed = "";
    await expect(
      databases.with(async (db) => {
        failed = db.name;
        expect(db.name).not.toBe(first);
        const [row] = await db.sql<{ t: string | null }[]>`SELECT to_regclass('left_behind')::text AS t`;
        expect(row!.t).toBeNull();
        throw new Error("the scenario failed");
      }),
    ).rejects.toThrow("the scenario failed");
    expect(await exists(failed)).toBe(false);
  });

  it("drops what is still open when the run is interrupted", async () => {
    let name = "";
    let release = () => {};
    const running = databases.with(async (db) => {
      name = db.name;
      await new Promise<void>((resolve) => (release = resolve));
    });
    while (name === "") await new Promise((r) => setTimeout(r, 10));
    await databases.closeAll();
    expect(await exists(name)).toBe(false);
    release();
    await running;
  });
});
