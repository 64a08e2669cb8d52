// /readyz says "migrations current": the schema version this release expects equals the applied
// one. A database a newer release migrated further, or one missing this release's last migration,
// makes a running server unready (503), and ready again once the versions agree.
import { expectedSchemaVersion } from "@aexhq/brain-db/ops";
import { expect, it } from "vitest";
import { spawnBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";

const brain = startedBeforeAll(() => spawnBrain());

async function readyz(): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${brain.url}/readyz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

it("is ready with the expected schema version applied, and unready while the versions differ", async () => {
  const expected = expectedSchemaVersion();
  expect(expected).toBeGreaterThan(0);
  expect(await readyz()).toEqual({
    status: 200,
    body: expect.objectContaining({
      status: "ready",
      migrations: true,
      schemaVersion: { expected, applied: expected },
    }),
  });

  // A newer release migrated the database further.
  await brain.db.sql`INSERT INTO brain.migrations (version, name, checksum) VALUES (${expected + 1}, 'newer', 'x')`;
  expect(await readyz()).toEqual({
    status: 503,
    body: expect.objectContaining({
      status: "unavailable",
      database: true,
      migrations: false,
      schemaVersion: { expected, applied: expected + 1 },
    }),
  });
  await brain.db.sql`DELETE FROM brain.migrations WHERE version = ${expected + 1}`;
  expect((await readyz()).status).toBe(200);

  // This release's last migration is not recorded as applied.
  const [last] = await brain.db.sql`DELETE FROM brain.migrations WHERE version = ${expected} RETURNING *`;
  try {
    expect(await readyz()).toMatchObject({
      status: 503,
      body: { migrations: false, schemaVersion: { applied: expected - 1 } },
    });
  } finally {
    await brain.db.sql`INSERT INTO brain.migrations ${brain.db.sql(last as Record<string, unknown>)}`;
  }
  expect((await readyz()).status).toBe(200);
});
