import { randomUUID } from "node:crypto";
import { channelFor } from "@aexhq/brain-db/commits";
import {
  claimParkedSessions,
  claimSession,
  type Judgement,
  NO_JUDGEMENT,
  orphanedSessions,
  registerServer,
} from "@aexhq/brain-db/ops";
import { JournalWriter } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import { bareSession, hostAndStoppedServer } from "../../../testkit/session-rows.js";
import { until } from "../../../testkit/wait.js";
import { JUDGE_AFTER_MS, Liveness } from "../../src/liveness.js";
import { type RecoveryDeps, sweep } from "../../src/recovery.js";

// A server that takes over a stopped server's sessions resumes them in its recovery sweep. With
// thousands of them, the sweep takes page after page in one go (not a page per heartbeat), a few
// at a time, and a claim held up on a locked session row does not hold up the rest. Back from an
// outage, it leaves the sessions of owners that were as alive as itself before it. The registry
// of actors and the liveness verdicts are the only things replaced here: resume claims for real
// and records how many claims ran at once. The claim statements themselves: a page's parked
// sessions in one statement, taking only what a single claim would and skipping a held row rather
// than waiting for it; a single claim answering the session's routing unless it was parked.

let db: TestDatabase;
let writer: JournalWriter;
let hostId: string;
let gone: string;

beforeAll(async () => {
  db = await createTestDatabase({ max: 12 });
  ({ hostId, gone } = await hostAndStoppedServer(db.sql));
  writer = new JournalWriter(db.sql, { channel: channelFor("brain"), origin: randomUUID() });
});
afterAll(async () => {
  await writer?.close();
  await db?.drop();
});

/** `n` active sessions owned by a server that has stopped (or by `owner`). */
async function orphans(n: number, owner = gone): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID());
  for (let i = 0; i < ids.length; i += 100) {
    await Promise.all(ids.slice(i, i + 100).map((id) => writer.submit(bareSession(id, hostId, owner))));
  }
  return ids;
}

/**
 * A server of its own, and a sweep whose resumes claim for it (or take nothing: `claims: false`);
 * `parked`: parked sessions are taken the registry's way, in one statement a page.
 */
async function server(options: { claims: boolean; parked?: boolean }) {
  const serverId = randomUUID();
  await registerServer(db.sql, serverId);
  const seen = { resumes: 0, inFlight: 0, maxInFlight: 0, parkedClaims: 0 };
  // What liveness.ts would answer: never declaring, presuming nobody live (a fresh server's view).
  const liveness: Judgement = { judgedAt: null, presumedLiveSince: null };
  const actors = {
    async resumeParked(ids: readonly string[], judge: Judgement) {
      seen.parkedClaims++;
      if (!options.parked) return new Set<string>();
      return new Set((await claimParkedSessions(db.sql, ids, serverId, judge)).map((t) => t.id));
    },
    async resume(sessionId: string) {
      seen.resumes++;
      seen.inFlight++;
      seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
      try {
        if (!options.claims) return null;
        return (await claimSession(db.sql, sessionId, serverId, { ...liveness })) === null ? null : {};
      } finally {
        seen.inFlight--;
      }
    },
  };
  const rt = {
    sql: db.sql,
    serverId,
    writer,
    log: { warn() {}, error() {} },
    actors,
    boss: undefined,
    liveness: {
      verdicts: () => ({ mayDeclareDead: false, judgement: { ...liveness } }),
      judgement: () => ({ ...liveness }),
    },
  } as unknown as RecoveryDeps;
  const owned = async (ids: string[]) => {
    const [row] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM sessions WHERE owner_id = ${serverId} AND id = ANY(${ids}::uuid[])`;
    return row!.n;
  };
  return { serverId, rt, seen, owned, liveness };
}

async function clearOrphans(): Promise<void> {
  await db.sql`UPDATE sessions SET status = 'ended' WHERE status = 'active'`;
}

describe("taking over a stopped server's sessions", () => {
  it("resumes more than a page of orphans in one sweep, a few claims at a time", async () => {
    await clearOrphans();
    const ids = await orphans(620);
    const s = await server({ claims: true });
    await sweep(s.rt);
    expect(await s.owned(ids)).toBe(620);
    expect(s.seen.maxInFlight).toBeGreaterThan(1);
    expect(s.seen.maxInFlight).toBeLessThanOrEqual(8);
  });

  it("takes parked orphans a page a statement, and the others one by one", async () => {
    await clearOrphans();
    const parked = await orphans(620);
    await db.sql`UPDATE sessions SET parked_seq = last_seq WHERE id = ANY(${parked}::uuid[])`;
    const moved = await orphans(30);
    const s = await server({ claims: true, parked: true });
    await sweep(s.rt);
    expect(await s.owned(parked)).toBe(620);
    expect(await s.owned(moved)).toBe(30);
    // Two pages of orphans: two statements for the parked ones, a claim each for the rest.
    expect(s.seen.parkedClaims).toBe(2);
    expect(s.seen.resumes).toBe(30);
  });

  it("goes on with the other orphans while one claim waits on a locked session row", async () => {
    await clearOrphans();
    const ids = await orphans(40);
    const s = await server({ claims: true });
    // The first orphan the sweep will read is the one whose row is locked.
    const [first] = await orphanedSessions(db.sql);
    const lock = await db.sql.reserve();
    let swept: Promise<void> | undefined;
    try {
      await lock`BEGIN`;
      await lock`SELECT 1 FROM sessions WHERE id = ${first!} FOR UPDATE`;
      swept = sweep(s.rt);
      await until("the other orphans claimed", async () => (await s.owned(ids)) === ids.length - 1);
    } finally {
      await lock`ROLLBACK`.catch(() => {});
      lock.release();
    }
    await swept;
    expect(await s.owned(ids)).toBe(ids.length);
  });

  it("stops after a page that took nothing (the server is stopping, or others claim them)", async () => {
    await clearOrphans();
    await orphans(620);
    const s = await server({ claims: false });
    await sweep(s.rt);
    expect(s.seen.resumes).toBe(500);
  });

  it("back from an outage, leaves the sessions of owners that beat as late as it did, takes the rest", async () => {
    await clearOrphans();
    // Two servers silent for longer than the stale window: one beat 10 s ago, when this server
    // last beat before the outage too; the other died long before (60 s).
    const [recent, old] = [randomUUID(), randomUUID()];
    for (const id of [recent, old]) await registerServer(db.sql, id);
    await db.sql`UPDATE servers SET heartbeat_at = now() - interval '10 seconds' WHERE id = ${recent}`;
    await db.sql`UPDATE servers SET heartbeat_at = now() - interval '60 seconds' WHERE id = ${old}`;
    const ofRecent = await orphans(5, recent);
    const ofOld = await orphans(5, old);
    const s = await server({ claims: true });
    const [row] = await db.sql<{ t: Date }[]>`SELECT now() - interval '13 seconds' AS t`;
    const t = row!.t;
    s.liveness.presumedLiveSince = t;
    await sweep(s.rt);
    expect(await s.owned(ofRecent)).toBe(0);
    expect(await s.owned(ofOld)).toBe(5);
    // A claim by any other path (a commit woke the session) is refused the same way.
    expect(await claimSession(db.sql, ofRecent[0]!, s.serverId, { judgedAt: null, presumedLiveSince: t })).toBeNull();
    // Once this server has been back a stale window, nobody is presumed live any more.
    s.liveness.presumedLiveSince = null;
    await sweep(s.rt);
    expect(await s.owned(ofRecent)).toBe(5);
  });

  it("judges as of its own last beat: a claim that ran late finds an owner that beat then live", async () => {
    await clearOrphans();
    // The owner beat 5 s ago, the judge 4.5 s ago (and then the database went away): a claim
    // sent then and run only now must not find the owner stale, though it is by now().
    const owner = randomUUID();
    await registerServer(db.sql, owner);
    await db.sql`UPDATE servers SET heartbeat_at = now() - interval '5 seconds' WHERE id = ${owner}`;
    const [id] = await orphans(1, owner);
    const s = await server({ claims: true });
    const [row] = await db.sql<{ t: Date }[]>`SELECT now() - interval '3.5 seconds' AS t`;
    s.liveness.judgedAt = row!.t;
    expect(await orphanedSessions(db.sql, 500, { ...s.liveness })).not.toContain(id);
    expect(await claimSession(db.sql, id!, s.serverId, { ...s.liveness })).toBeNull();
    // Judged as of now, it is an orphan.
    s.liveness.judgedAt = null;
    await sweep(s.rt);
    expect(await s.owned([id!])).toBe(1);
  });
  it("judges by one verdict a sweep: the window ending midway takes nothing it did not declare dead", async () => {
    await clearOrphans();
    // An owner that beat just before the outage, like this server; silent since (frozen).
    const frozen = randomUUID();
    await registerServer(db.sql, frozen);
    await db.sql`UPDATE servers SET heartbeat_at = now() - interval '10 seconds' WHERE id = ${frozen}`;
    const ids = await orphans(3, frozen);
    const s = await server({ claims: true });
    // This server's own liveness: a steady beat then, the outage, a beat since it came back.
    let upFor = 60_000;
    let advancing = false;
    const liveness = new Liveness(() => {
      const at = upFor;
      if (advancing) upFor += 200;
      return at;
    }, 1000);
    const [then] = await db.sql<{ t: Date }[]>`SELECT now() - interval '10 seconds' AS t`;
    liveness.beat(then!.t);
    liveness.away();
    upFor = 100;
    const [now] = await db.sql<{ t: Date }[]>`SELECT now() AS t`;
    liveness.beat(now!.t);
    // The stale window ends while the sweep runs: every reading of the clock is 200 ms later.
    upFor = JUDGE_AFTER_MS - 100;
    advancing = true;
    const rt = { ...s.rt, liveness } as unknown as RecoveryDeps;
    await sweep(rt);
    expect(await s.owned(ids)).toBe(0);
    // The next sweep declares the frozen server dead, and only then takes its sessions.
    await sweep(rt);
    const [row] = await db.sql<{ stopped: boolean }[]>`
      SELECT stopped_at IS NOT NULL AS stopped FROM servers WHERE id = ${frozen}`;
    expect(row?.stopped).toBe(true);
    expect(await s.owned(ids)).toBe(3);
  });
});

/** An active session owned by `owner`, parked with nothing since when `parked`. */
async function ownedSession(owner: string, parked: boolean): Promise<string> {
  const id = randomUUID();
  await writer.submit(bareSession(id, hostId, owner));
  if (parked) await db.sql`UPDATE sessions SET parked_seq = last_seq WHERE id = ${id}`;
  return id;
}

async function owners(ids: string[]): Promise<Record<string, { owner: string; epoch: number }>> {
  const rows = await db.sql<{ id: string; owner_id: string; owner_epoch: string }[]>`
    SELECT id, owner_id, owner_epoch FROM sessions WHERE id = ANY(${ids}::uuid[])`;
  return Object.fromEntries(rows.map((r) => [r.id, { owner: r.owner_id, epoch: Number(r.owner_epoch) }]));
}

/** Two servers registered now (so both beat fresh for the test): the claimer and a live owner. */
async function claimerAndLiveOwner(): Promise<{ me: string; live: string }> {
  const [me, live] = [randomUUID(), randomUUID()];
  for (const id of [me, live]) await registerServer(db.sql, id);
  return { me, live };
}

describe("claim statements", () => {
  it("claims a page's parked sessions in one statement, nothing a single claim would refuse", async () => {
    const { me, live } = await claimerAndLiveOwner();
    const parked = [await ownedSession(gone, true), await ownedSession(gone, true)];
    const moved = await ownedSession(gone, false);
    const ownedLive = await ownedSession(live, true);
    const ended = await ownedSession(gone, true);
    await db.sql`UPDATE sessions SET status = 'ended' WHERE id = ${ended}`;
    const all = [...parked, moved, ownedLive, ended];
    const before = await owners(all);
    const taken = await claimParkedSessions(db.sql, all, me, NO_JUDGEMENT);
    expect(taken.map((t) => t.id).sort()).toEqual([...parked].sort());
    const after = await owners(all);
    for (const id of parked) expect(after[id]).toEqual({ owner: me, epoch: before[id]!.epoch + 1 });
    for (const id of [moved, ownedLive, ended]) expect(after[id]).toEqual(before[id]);
  });

  it("skips a parked session another transaction holds, without waiting for it", async () => {
    const { me } = await claimerAndLiveOwner();
    const [held, free] = [await ownedSession(gone, true), await ownedSession(gone, true)];
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
    const { me } = await claimerAndLiveOwner();
    const moved = await ownedSession(gone, false);
    await db.sql`INSERT INTO session_hosts (session_id, env_name, host_id) VALUES (${moved}, 'search', ${hostId})`;
    const claim = await claimSession(db.sql, moved, me, NO_JUDGEMENT);
    expect(claim?.parked).toBe(false);
    expect(claim?.session).toEqual({
      id: moved,
      hostId,
      model: { provider: "scripted", script: [] },
      tools: [],
      namedHosts: { search: hostId },
      tokenId: null,
    });
    const parked = await ownedSession(gone, true);
    expect(await claimSession(db.sql, parked, me, NO_JUDGEMENT)).toMatchObject({ parked: true, session: null });
  });
});
