import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect, openLane } from "@aexhq/brain-db/connect";
import { DRIVER_VERSION, patchedDriverSources } from "@aexhq/brain-db/driver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { until } from "../../testkit/wait.js";

// postgres.js 3.4.9 dies of an uncaught TypeError when a reserved connection or a transaction is
// used after its connection closed (db/driver/postgres-3.4.9-fixes.patch). The script terminates the backends
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
  // The installed package's root (its CommonJS entry is cjs/src/index.js).
  const packageDir = join(dirname(createRequire(import.meta.url).resolve("postgres")), "..", "..");
  const patchesDir = fileURLToPath(new URL("../driver", import.meta.url));

  it("is the pinned version, and db/driver's patches apply to it exactly", () => {
    const patched = patchedDriverSources(packageDir, patchesDir);
    for (const name of ["connection.js", "index.js", "queue.js"]) {
      expect(patched.get(name), name).not.toBe(readFileSync(join(packageDir, "src", name), "utf8"));
    }
    // What the build wrote is what the patches make.
    for (const [name, text] of patched) {
      expect(readFileSync(fileURLToPath(new URL(`../dist/driver/postgres/${name}`, import.meta.url)), "utf8")).toBe(
        text,
      );
    }
  });

  it("refuses any other version of the driver, loudly", () => {
    const other = mkdtempSync(join(tmpdir(), "postgres-"));
    try {
      cpSync(packageDir, other, { recursive: true });
      writeFileSync(join(other, "package.json"), JSON.stringify({ name: "postgres", version: "3.4.8" }));
      expect(() => patchedDriverSources(other, patchesDir)).toThrow(
        `postgres.js 3.4.8 is installed; db/driver/ patches ${DRIVER_VERSION}`,
      );
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

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

  it("is the driver Brain's pools run on: a reservation whose connection closed rejects", async () => {
    const pool = connect(db.url, { schema: "brain", searchPath: true, max: 1 });
    let closes = 0;
    const lane = openLane(pool, "brain-test-lane", { onClose: () => closes++ });
    try {
      const reserved = await lane.reserve();
      const [row] = await reserved<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      await db.sql`SELECT pg_terminate_backend(${row!.pid})`;
      await until("the lane to see its connection close", async () => closes > 0);
      // As published, the driver would kill this process here with an uncaught TypeError.
      await expect(reserved`SELECT 1`).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
      expect(await lane`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    } finally {
      await Promise.all([lane.end({ timeout: 1 }), pool.end({ timeout: 1 })]);
    }
  });
});
