// An Environment's setup records its verdict only for the configuration it ran: one replaced
// while the setup was running keeps status `new` (and must be set up again), one left alone gets
// the verdict. The configuration's revision is what tells them apart (migration 0025). Runs on one
// Postgres and, in the Citus leg, on a cluster.
import { randomUUID } from "node:crypto";
import {
  attemptEnvironmentSetup,
  type EnvironmentConfig,
  insertEnvironment,
  replaceEnvironment,
} from "@aexhq/brain-db/ops";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { bareSession, runAlone } from "../../testkit/session-rows.js";

let db: TestDatabase;
let sessionId: string;

const config = (baseUrl: string): EnvironmentConfig => ({
  baseUrl,
  headerNames: [],
  setup: { method: "POST", path: "/setup" },
});

beforeAll(async () => {
  db = await createTestDatabase({ max: 4 });
  const serverId = randomUUID();
  const hostId = randomUUID();
  sessionId = randomUUID();
  await db.sql`INSERT INTO servers (id) VALUES (${serverId})`;
  await db.sql`INSERT INTO hosts (id, token_hash) VALUES (${hostId}, '\\x00')`;
  await runAlone(db.sql, bareSession(sessionId, hostId, serverId));
});
afterAll(async () => {
  await db?.drop();
});

async function created(name: string): Promise<void> {
  const outcome = await db.sql.begin((tx) =>
    insertEnvironment(tx, sessionId, { name, config: config("http://127.0.0.1:1"), headers: null }),
  );
  expect(outcome).toBe("created");
}

describe("an Environment's setup", () => {
  it("records its verdict for the configuration it ran", async () => {
    await created("kept");
    const attempt = await attemptEnvironmentSetup(db.sql, sessionId, "kept", false, async () => ({ ok: true }));
    expect(attempt).toMatchObject({ kind: "done", ran: true, row: { status: "ready" } });
  });

  it("records nothing for a configuration replaced while it ran, which stays to be set up", async () => {
    await created("replaced");
    const attempt = await attemptEnvironmentSetup(db.sql, sessionId, "replaced", false, async (env) => {
      expect(env.row.status).toBe("new");
      await db.sql.begin((tx) =>
        replaceEnvironment(tx, sessionId, "replaced", config("http://127.0.0.1:2"), undefined),
      );
      return { ok: false, error: "the old configuration's setup failed" };
    });
    expect(attempt).toMatchObject({
      kind: "done",
      ran: true,
      row: { status: "new", setupError: null, config: { baseUrl: "http://127.0.0.1:2" } },
    });
    const [row] = await db.sql<{ status: string; revision: string }[]>`
      SELECT status, revision::text FROM environments WHERE session_id = ${sessionId} AND name = 'replaced'`;
    expect(row).toEqual({ status: "new", revision: "1" });
    // Set up again, for the configuration now current: the verdict is recorded.
    const again = await attemptEnvironmentSetup(db.sql, sessionId, "replaced", false, async (env) => {
      expect(env.row.config.baseUrl).toBe("http://127.0.0.1:2");
      return { ok: true };
    });
    expect(again).toMatchObject({ kind: "done", ran: true, row: { status: "ready" } });
  });
});
