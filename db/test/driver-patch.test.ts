import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { patchDriverSource } from "@aexhq/brain-db/driver-patch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { until } from "../../testkit/wait.js";

// postgres.js 3.4.9 dies of an uncaught TypeError when a reserved connection or a transaction is
// used after its connection closed (db/src/driver/patch.ts). The script terminates the backends
// under a reserved connection and a transaction, then uses them and the pool.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["testkit/scripts/driver-closed-connection.mjs", db.url, ...args],
      { timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("the database driver", () => {
  it.each(["connection.js", "index.js"])(
    "is the version the edits were written for: each edit to %s finds its text once",
    (name) => {
      // The CommonJS entry (cjs/src/index.js) beside which the ES module build (src/) is installed.
      const root = join(dirname(createRequire(import.meta.url).resolve("postgres")), "..", "..");
      const file = join(root, "src", name);
      const source = readFileSync(file, "utf8");
      const patched = patchDriverSource(pathToFileURL(file).href, source);
      expect(patched, "postgres.js changed: check whether it still needs db/src/driver/patch.ts").not.toBeNull();
      expect(patched).not.toBe(source);
    },
  );

  it("as published, dies when a closed reserved connection is used (the upstream bug)", async () => {
    const { code, stderr } = await run();
    expect(code).not.toBe(0);
    expect(stderr).toContain("Cannot read properties of null (reading 'write')");
  }, 90_000);

  it("patched, rejects what is sent on a closed connection or by a holder that lost it, and the pool goes on", async () => {
    const { code, stdout, stderr } = await run("--patched");
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      reserved: "CONNECTION_CLOSED",
      transaction: "CONNECTION_CLOSED",
      after: "answered",
      stale: "CONNECTION_CLOSED",
    });
  }, 90_000);

  it("is loaded patched in test processes too (testkit/driver-patch.ts): a closed reservation rejects", async () => {
    const { default: postgres } = await import("postgres");
    let closes = 0;
    const sql = postgres(db.url, { max: 1, onnotice: () => {}, onclose: () => closes++ });
    try {
      const reserved = await sql.reserve();
      const [row] = await reserved<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      await db.sql`SELECT pg_terminate_backend(${row!.pid})`;
      await until("the pool to see its connection close", async () => closes > 0);
      // Unpatched, this process would die here of an uncaught TypeError.
      await expect(reserved`SELECT 1`).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
      expect(await sql`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});
