import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { patchDriverSource } from "@aexhq/brain-db/driver-patch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";

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
  it("is the version the edits were written for: each edit finds its text once", () => {
    // The CommonJS entry (cjs/src/index.js) beside which the ES module build (src/) is installed.
    const root = join(dirname(createRequire(import.meta.url).resolve("postgres")), "..", "..");
    const source = readFileSync(join(root, "src", "connection.js"), "utf8");
    const patched = patchDriverSource(source);
    expect(patched, "postgres.js changed: check whether it still needs db/src/driver/patch.ts").not.toBeNull();
    expect(patched).not.toBe(source);
  });

  it("as published, dies when a closed reserved connection is used (the upstream bug)", async () => {
    const { code, stderr } = await run();
    expect(code).not.toBe(0);
    expect(stderr).toContain("Cannot read properties of null (reading 'write')");
  }, 90_000);

  it("patched, rejects what is sent on a closed connection and the pool goes on", async () => {
    const { code, stdout, stderr } = await run("--patched");
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      reserved: "CONNECTION_CLOSED",
      transaction: "CONNECTION_CLOSED",
      after: "answered",
    });
  }, 90_000);
});
