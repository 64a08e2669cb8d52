import { randomBytes, randomUUID } from "node:crypto";
import { appendUnchecked, claimSession } from "@aexhq/brain-db/ops";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { bareSession, runAlone as run } from "../../testkit/session-rows.js";
import { untilLockWait } from "../../testkit/wait.js";

// A session's host, owner and token are checked by triggers when they are written (migration
// 0016), not by foreign keys that Postgres re-checks whenever one transaction updates a session
// row twice. These tests hold the triggers to what the keys promised, and show the hot path no
// longer touches the parent rows.

let db: TestDatabase;
const serverId = randomUUID();
const tokenId = randomUUID();

async function newHost(): Promise<string> {
  const id = randomUUID();
  await db.sql`INSERT INTO hosts (id, token_hash) VALUES (${id}, '\\x00')`;
  return id;
}

function session(id: string, refs: { hostId: string; ownerId?: string; tokenId?: string }) {
  return bareSession(id, refs.hostId, refs.ownerId ?? serverId, refs.tokenId ? { tokenId: refs.tokenId } : {});
}

/** The database's error, or a failure when the promise resolved. */
async function refusal(p: Promise<unknown>): Promise<{ code?: string; constraint_name?: string }> {
  try {
    await p;
  } catch (error) {
    return error as { code?: string; constraint_name?: string };
  }
  throw new Error("expected the database to refuse");
}

const sessionExists = async (id: string) => (await db.sql`SELECT 1 FROM sessions WHERE id = ${id}`).length === 1;

beforeAll(async () => {
  db = await createTestDatabase({ max: 8 });
  await db.sql`INSERT INTO servers (id) VALUES (${serverId})`;
  await db.sql`INSERT INTO app_tokens (id, name, token_hash) VALUES (${tokenId}, 'app', ${randomBytes(32)})`;
});
afterAll(async () => {
  await db?.drop();
});

describe("a session's references", () => {
  it("refuses a session naming a host, server or token that does not exist, and keeps nothing of it", async () => {
    const host = await newHost();
    const cases = [
      { refs: { hostId: randomUUID() }, constraint: "sessions_host_id_fkey" },
      { refs: { hostId: host, ownerId: randomUUID() }, constraint: "sessions_owner_id_fkey" },
      { refs: { hostId: host, tokenId: randomUUID() }, constraint: "sessions_token_id_fkey" },
    ];
    for (const { refs, constraint } of cases) {
      const id = randomUUID();
      const error = await refusal(run(db.sql, session(id, refs)));
      expect(error.code, constraint).toBe("23503");
      expect(error.constraint_name).toBe(constraint);
      expect(await sessionExists(id)).toBe(false);
      expect((await db.sql`SELECT 1 FROM records WHERE session_id = ${id}`).length).toBe(0);
    }
    // Named parents that exist: created.
    const ok = randomUUID();
    await run(db.sql, session(ok, { hostId: host, tokenId }));
    expect(await sessionExists(ok)).toBe(true);
  });

  it("refuses a takeover by a server that does not exist", async () => {
    const id = randomUUID();
    await run(db.sql, session(id, { hostId: await newHost() }));
    await db.sql`UPDATE sessions SET owner_id = NULL WHERE id = ${id}`;
    const error = await refusal(claimSession(db.sql, id, randomUUID()));
    expect(error).toMatchObject({ code: "23503", constraint_name: "sessions_owner_id_fkey" });
    expect((await claimSession(db.sql, id, serverId))?.epoch).toBeGreaterThan(0);
  });

  it("refuses to delete or re-key a host, server or token a session names; deletes them once nothing does", async () => {
    const host = await newHost();
    const server = randomUUID();
    await db.sql`INSERT INTO servers (id) VALUES (${server})`;
    const token = randomUUID();
    await db.sql`INSERT INTO app_tokens (id, name, token_hash) VALUES (${token}, 't', ${randomBytes(32)})`;
    const id = randomUUID();
    await run(db.sql, session(id, { hostId: host, ownerId: server, tokenId: token }));

    const parents = [
      { table: "hosts", key: host, constraint: "sessions_host_id_fkey" },
      { table: "servers", key: server, constraint: "sessions_owner_id_fkey" },
      { table: "app_tokens", key: token, constraint: "sessions_token_id_fkey" },
    ];
    for (const { table, key, constraint } of parents) {
      const deleted = await refusal(db.sql`DELETE FROM ${db.sql(table)} WHERE id = ${key}`);
      expect(deleted, table).toMatchObject({ code: "23503", constraint_name: constraint });
      const rekeyed = await refusal(db.sql`UPDATE ${db.sql(table)} SET id = ${randomUUID()} WHERE id = ${key}`);
      expect(rekeyed, table).toMatchObject({ code: "23503", constraint_name: constraint });
      // An update that keeps the id is the parent's own business.
      if (table === "hosts") await db.sql`UPDATE hosts SET last_connected_at = now() WHERE id = ${key}`;
    }

    await db.sql`DELETE FROM records WHERE session_id = ${id}`;
    await db.sql`DELETE FROM sessions WHERE id = ${id}`;
    for (const { table, key } of parents) {
      expect((await db.sql`DELETE FROM ${db.sql(table)} WHERE id = ${key} RETURNING id`).length, table).toBe(1);
    }
  });

  it("checks from a connection whose search_path does not name Brain's schema", async () => {
    const plain = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      const host = await newHost();
      const id = randomUUID();
      await run(db.sql, session(id, { hostId: host }));
      const [path] = await plain<{ search_path: string }[]>`SHOW search_path`;
      expect(path!.search_path).not.toContain("brain");
      expect(await refusal(plain`DELETE FROM brain.hosts WHERE id = ${host}`)).toMatchObject({
        code: "23503",
        constraint_name: "sessions_host_id_fkey",
      });
      expect(await refusal(plain`UPDATE brain.sessions SET host_id = ${randomUUID()} WHERE id = ${id}`)).toMatchObject({
        code: "23503",
        constraint_name: "sessions_host_id_fkey",
      });
    } finally {
      await plain.end();
    }
  });
});

describe("a session's references under concurrency", () => {
  it("a session created while its host's deletion is in flight waits for it, then is refused", async () => {
    const host = await newHost();
    const deleter = await db.sql.reserve();
    try {
      await deleter`BEGIN`;
      await deleter`DELETE FROM hosts WHERE id = ${host}`;
      const id = randomUUID();
      const creating = refusal(run(db.sql, session(id, { hostId: host })));
      await untilLockWait(db.sql);
      await deleter`COMMIT`;
      expect(await creating).toMatchObject({ code: "23503", constraint_name: "sessions_host_id_fkey" });
      expect(await sessionExists(id)).toBe(false);
    } finally {
      deleter.release();
    }
  });

  it("a host deleted while a session naming it commits waits for it, then is refused", async () => {
    const host = await newHost();
    const creator = await db.sql.reserve();
    const id = randomUUID();
    try {
      await creator`BEGIN`;
      await session(id, { hostId: host }).run(creator as never);
      const deleting = refusal(db.sql`DELETE FROM hosts WHERE id = ${host}`);
      await untilLockWait(db.sql);
      await creator`COMMIT`;
      expect(await deleting).toMatchObject({ code: "23503", constraint_name: "sessions_host_id_fkey" });
      expect((await db.sql`SELECT 1 FROM hosts WHERE id = ${host}`).length).toBe(1);
      expect(await sessionExists(id)).toBe(true);
    } finally {
      creator.release();
    }
  });

  it("leaves no session naming a missing host when creations race deletions", async () => {
    const hosts = await Promise.all(Array.from({ length: 30 }, () => newHost()));
    await Promise.all(
      hosts.flatMap((host) => [
        run(db.sql, session(randomUUID(), { hostId: host })).catch(() => {}),
        db.sql`DELETE FROM hosts WHERE id = ${host}`.catch(() => {}),
      ]),
    );
    const [row] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM sessions s
      WHERE s.host_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM hosts h WHERE h.id = s.host_id)`;
    expect(row!.n).toBe(0);
  });

  it("a batch that updates a session twice takes no lock on its host, server or token", async () => {
    const host = await newHost();
    const id = randomUUID();
    await run(db.sql, session(id, { hostId: host, tokenId }));
    // Another transaction holds every parent row as a deletion would. A foreign key re-checked
    // on the second update (the row it replaces was written by the same transaction) would wait
    // for it, here until lock_timeout.
    const holder = await db.sql.reserve();
    try {
      await holder`BEGIN`;
      await holder`SELECT 1 FROM hosts WHERE id = ${host} FOR UPDATE`;
      await holder`SELECT 1 FROM servers WHERE id = ${serverId} FOR UPDATE`;
      await holder`SELECT 1 FROM app_tokens WHERE id = ${tokenId} FOR UPDATE`;
      const written = await db.sql.begin(async (tx) => {
        await tx`SET LOCAL lock_timeout = '3s'`;
        const first = await appendUnchecked(id, [{ kind: "note", payload: { n: 1 } }]).run(tx);
        const second = await appendUnchecked(id, [{ kind: "note", payload: { n: 2 } }]).run(tx);
        return [...first.records, ...second.records].map((r) => r.seq);
      });
      expect(written).toEqual([2, 3]);
    } finally {
      await holder`ROLLBACK`;
      holder.release();
    }
  });
});
