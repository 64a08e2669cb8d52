import { randomUUID } from "node:crypto";
import {
  channelFor,
  claimParkedSessions,
  claimSession,
  JournalWriter,
  NO_JUDGEMENT,
  registerServer,
} from "@aexhq/brain-db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { bareSession, hostAndStoppedServer } from "../../testkit/session-rows.js";

// A takeover of a stopped server's idle sessions claims the parked ones in one statement a page.
// It takes only what a single claim would (parked with nothing since, active, no live owner),
// bumps each fencing epoch, and skips a row another transaction holds rather than waiting for it.
// A single claim of a session that was not parked answers its routing with it (no read after).

let db: TestDatabase;
let writer: JournalWriter;
let hostId: string;
let gone: string;
const live = randomUUID();
const me = randomUUID();

beforeAll(async () => {
  db = await createTestDatabase({ max: 4 });
  ({ hostId, gone } = await hostAndStoppedServer(db.sql));
  for (const id of [live, me]) await registerServer(db.sql, id);
  writer = new JournalWriter(db.sql, { channel: channelFor("brain"), origin: randomUUID() });
});
afterAll(async () => {
  await writer?.close();
  await db?.drop();
});

async function session(owner: string, parked: boolean): Promise<string> {
  const id = randomUUID();
  await writer.submit(bareSession(id, hostId, owner));
  if (parked) await db.sql`UPDATE sessions SET parked_seq = last_seq WHERE id = ${id}`;
  return id;
}

const epochs = async (ids: string[]) =>
  (
    await db.sql<{ id: string; owner_id: string; owner_epoch: string }[]>`
      SELECT id, owner_id, owner_epoch FROM sessions WHERE id = ANY(${ids}::uuid[])`
  ).reduce<Record<string, { owner: string; epoch: number }>>((m, r) => {
    m[r.id] = { owner: r.owner_id, epoch: Number(r.owner_epoch) };
    return m;
  }, {});

describe("claiming parked sessions in one statement", () => {
  it("takes the parked sessions of a stopped server, and nothing a single claim would refuse", async () => {
    const parked = [await session(gone, true), await session(gone, true)];
    const moved = await session(gone, false);
    const ownedLive = await session(live, true);
    const ended = await session(gone, true);
    await db.sql`UPDATE sessions SET status = 'ended' WHERE id = ${ended}`;
    const all = [...parked, moved, ownedLive, ended];
    const before = await epochs(all);
    const taken = await claimParkedSessions(db.sql, all, me, NO_JUDGEMENT);
    expect(taken.map((t) => t.id).sort()).toEqual([...parked].sort());
    const after = await epochs(all);
    for (const id of parked) expect(after[id]).toEqual({ owner: me, epoch: before[id]!.epoch + 1 });
    for (const id of [moved, ownedLive, ended]) expect(after[id]).toEqual(before[id]);
  });

  it("skips a session another transaction holds, without waiting for it", async () => {
    const [held, free] = [await session(gone, true), await session(gone, true)];
    const lock = await db.sql.reserve();
    try {
      await lock`BEGIN`;
      await lock`SELECT 1 FROM sessions WHERE id = ${held} FOR UPDATE`;
      const taken = await claimParkedSessions(db.sql, [held, free], me, NO_JUDGEMENT);
      expect(taken.map((t) => t.id)).toEqual([free]);
    } finally {
      await lock`ROLLBACK`.catch(() => {});
      lock.release();
    }
  });
  it("a single claim answers what the Agentloop starts from, unless the session was parked", async () => {
    const moved = await session(gone, false);
    await db.sql`INSERT INTO session_hosts (session_id, env_name, host_id) VALUES (${moved}, 'search', ${hostId})`;
    const claim = await claimSession(db.sql, moved, me, NO_JUDGEMENT);
    expect(claim?.parked).toBe(false);
    expect(claim?.session).toEqual({
      id: moved,
      hostId,
      model: { provider: "scripted", script: [] },
      tools: [],
      namedHosts: { search: hostId },
    });
    const parked = await session(gone, true);
    expect(await claimSession(db.sql, parked, me, NO_JUDGEMENT)).toMatchObject({ parked: true, session: null });
  });
});
