import { ensureJournalPartitions, newSessionId, prune } from "@aexhq/brain-db/ops";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";

// Retention on a Citus cluster deletes ended sessions one by one (it cannot lock a week's
// sessions on every shard at once), then drops the past weeks' partitions it left empty
// (migration 0026), keeping a week that still holds a session.

const DAY = 86_400_000;
const WEEK = 7 * DAY;

/** The name of the records partition of the week `at` falls in (migration 0023's naming). */
function weekOf(at: number): string {
  const start = new Date(Math.floor(at / WEEK) * WEEK);
  return `records_w${start.toISOString().slice(0, 10).replaceAll("-", "")}`;
}

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function session(id: string, ended: Date | null): Promise<void> {
  await db.sql`
    INSERT INTO sessions (id, model, tools, metadata, last_seq, status, ended_at)
    VALUES (${id}, '{"provider":"scripted"}', '[]', '{}', 2, ${ended ? "ended" : "active"}, ${ended})`;
  await db.sql`INSERT INTO records (session_id, seq, kind, payload) VALUES (${id}, 1, 'a', '{}'), (${id}, 2, 'b', '{}')`;
  await db.sql`INSERT INTO calls (session_id, seq, tool, activation_seq, state, executor)
    VALUES (${id}, 2, 't', 1, 'ended', 'none')`;
}

const exists = async (name: string) =>
  (await db.sql<{ t: string | null }[]>`SELECT to_regclass(${`brain.${name}`})::text AS t`)[0]!.t !== null;

describe("retention on a cluster", () => {
  it("drops the past weeks it left empty, and keeps one that still holds a session", async () => {
    await ensureJournalPartitions(db.sql, 0, 6);
    const now = Date.now();
    const longAgo = new Date(now - 30 * DAY);
    const emptied = now - 35 * DAY;
    const held = now - 28 * DAY;
    await session(newSessionId(emptied), longAgo);
    await session(newSessionId(emptied + 1000), longAgo);
    await session(newSessionId(held), longAgo);
    const live = newSessionId(held + 1000);
    await session(live, null);
    for (const at of [emptied, held, now - 42 * DAY, now]) expect(await exists(weekOf(at))).toBe(true);

    const counts = await prune(db.sql, "brain", { olderThanSeconds: 86_400, wait: true });
    expect(counts).toMatchObject({ sessions: 3, records: 6 });
    // The week of the two ended sessions and a week that never had any: gone, both tables.
    for (const at of [emptied, now - 42 * DAY]) {
      expect(await exists(weekOf(at))).toBe(false);
      expect(await exists(weekOf(at).replace("records", "calls"))).toBe(false);
    }
    // The live session's week stays whole; this week too.
    expect(await exists(weekOf(held))).toBe(true);
    expect(await exists(weekOf(now))).toBe(true);
    const [left] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM records WHERE session_id = ${live}`;
    expect(left?.n).toBe(2);
  });
});
