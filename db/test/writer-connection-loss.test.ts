import { randomUUID } from "node:crypto";
import { channelFor, emptyKeys } from "@aexhq/brain-db/commits";
import { connect, DatabaseAvailability } from "@aexhq/brain-db/connect";
import { JournalWriter, type WriteOp } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { startPgProxy } from "../../testkit/pg-proxy.js";
import { until } from "../../testkit/wait.js";

// The journal writer's own connection dies: idle between batches, or inside a COMMIT. The writer
// must neither crash the process (postgres.js throws from a timer when a dead reserved connection
// is written to) nor apply a batch twice, and must know whether a batch it lost the answer to
// committed.

let db: TestDatabase;
const writers: JournalWriter[] = [];

function writer(stallMs?: number): JournalWriter {
  const w = new JournalWriter(db.sql, { channel: channelFor("brain"), origin: randomUUID(), stallMs });
  writers.push(w);
  return w;
}

/**
 * One probe row; `run` issues its statement before its first await, as the writer requires. With
 * `oneTrip`, it announces its keys in advance, so a batch of such probes is sent in one round trip
 * (BEGIN, mark, statements, NOTIFY, COMMIT); without, in two (the NOTIFY and COMMIT after the
 * statements' answers).
 */
function probe(tag: string, oneTrip = false): WriteOp<number> {
  return {
    ...(oneTrip ? { notify: emptyKeys() } : {}),
    keys: () => ({ sessions: new Map(), hosts: new Set(), releases: new Map() }),
    run: (tx) =>
      tx<{ id: number }[]>`INSERT INTO writer_probe (tag) VALUES (${tag}) RETURNING id`.then((r) => r[0]!.id),
  };
}

async function count(tag: string): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM writer_probe WHERE tag = ${tag}`;
  return row!.n;
}

/** Terminates the writer's backends in this test's database; how many. */
async function killWriters(): Promise<number> {
  const rows = await db.sql<{ ok: boolean }[]>`
    SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
    WHERE application_name = 'brain-writer' AND datname = current_database()`;
  return rows.length;
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`CREATE TABLE writer_probe (id bigserial PRIMARY KEY, tag text NOT NULL)`;
  // The first commit of a row tagged 'doomed' kills its own backend during COMMIT (a deferred
  // trigger): the client has sent COMMIT and hears only that the connection closed. A sequence
  // counts the kills, since it is not rolled back with the transaction it aborts.
  await db.sql.unsafe(`
    CREATE SEQUENCE writer_probe_kills;
    CREATE SEQUENCE writer_probe_kills_one_trip;
    CREATE SEQUENCE writer_probe_kills_statement;
    CREATE FUNCTION writer_probe_kill_once() RETURNS int LANGUAGE plpgsql AS $$
    BEGIN
      IF nextval('writer_probe_kills_statement') = 1 THEN
        PERFORM pg_terminate_backend(pg_backend_pid());
        PERFORM pg_sleep(5);
      END IF;
      RETURN 1;
    END $$;
    CREATE FUNCTION writer_probe_kill() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.tag = 'doomed' THEN
        IF nextval('writer_probe_kills') = 1 THEN
          PERFORM pg_terminate_backend(pg_backend_pid());
        END IF;
      ELSIF NEW.tag = 'doomed-one-trip' THEN
        IF nextval('writer_probe_kills_one_trip') = 1 THEN
          PERFORM pg_terminate_backend(pg_backend_pid());
        END IF;
      END IF;
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER writer_probe_kill AFTER INSERT ON writer_probe
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION writer_probe_kill();`);
});

afterAll(async () => {
  await Promise.all(writers.map((w) => w.close()));
  await db?.drop();
});

describe("the writer's connection dies", () => {
  it("while idle between batches: the next batch opens a new connection (no crash, one row)", async () => {
    const w = writer();
    await w.submit(probe("before"));
    expect(await killWriters()).toBe(1);
    // Wait until the backend is really gone, so the next write meets the dead connection.
    await until("the writer's backend to be gone", async () => (await killWriters()) === 0);
    await expect(w.submit(probe("after"))).resolves.toBeGreaterThan(0);
    expect(await count("after")).toBe(1);
    for (let i = 0; i < 20; i++) await w.submit(probe("later"));
    expect(await count("later")).toBe(20);
  });

  it("during COMMIT: the transaction's status decides, and the batch is applied exactly once", async () => {
    const w = writer();
    const batch = [w.submit(probe("doomed")), w.submit(probe("beside")), w.submit(probe("beside"))];
    await expect(Promise.all(batch)).resolves.toHaveLength(3);
    expect(w.stats.inDoubt).toBe(1);
    // Aborted by the kill (then tried once more on a new connection), or committed just before it:
    // either way every write is in the journal once.
    expect(await count("doomed")).toBe(1);
    expect(await count("beside")).toBe(2);
    const [kills] = await db.sql<{ n: number }[]>`SELECT last_value::int AS n FROM writer_probe_kills`;
    expect(kills!.n).toBeGreaterThanOrEqual(1);
  });

  it("stops answering: the stalled transaction's connection is cut, nothing of it is kept, later writes go on", async () => {
    const w = writer(500);
    const stuck: WriteOp<number> = {
      keys: () => ({ sessions: new Map(), hosts: new Set(), releases: new Map() }),
      run: (tx) =>
        tx<{ id: number }[]>`INSERT INTO writer_probe (tag) SELECT 'stalled' FROM pg_sleep(30) RETURNING id`.then(
          (r) => r[0]!.id,
        ),
    };
    // Cut once, retried once on a new connection, cut again: the database is reported away.
    await expect(w.submit(stuck)).rejects.toMatchObject({ code: "database_unavailable" });
    expect(w.stats.stalls).toBe(2);
    await expect(w.submit(probe("after-stall"))).resolves.toBeGreaterThan(0);
    expect(await count("stalled")).toBe(0);
    expect(await count("after-stall")).toBe(1);
  });
});

describe("the writer's connection dies under a one-round-trip batch", () => {
  it("during COMMIT: the mark decides, and the batch is applied exactly once", async () => {
    const w = writer();
    const batch = [
      w.submit(probe("doomed-one-trip", true)),
      w.submit(probe("beside-one-trip", true)),
      w.submit(probe("beside-one-trip", true)),
    ];
    await expect(Promise.all(batch)).resolves.toHaveLength(3);
    expect(w.stats.inDoubt).toBe(1);
    expect(await count("doomed-one-trip")).toBe(1);
    expect(await count("beside-one-trip")).toBe(2);
    const [kills] = await db.sql<{ n: number }[]>`SELECT last_value::int AS n FROM writer_probe_kills_one_trip`;
    expect(kills!.n).toBeGreaterThanOrEqual(1);
  });

  it("a failing statement fails alone: the rest of its batch commits, nothing of it is kept", async () => {
    const w = writer();
    const bad: WriteOp<number> = {
      notify: emptyKeys(),
      keys: emptyKeys,
      run: (tx) =>
        tx<{ id: number }[]>`INSERT INTO writer_probe (id, tag) VALUES (-1, NULL) RETURNING id`.then((r) => r[0]!.id),
    };
    const results = await Promise.allSettled([
      w.submit(probe("next-to-bad", true)),
      w.submit(bad),
      w.submit(probe("next-to-bad", true)),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(w.stats.fallbacks).toBeGreaterThanOrEqual(1);
    expect(await count("next-to-bad")).toBe(2);
    for (let i = 0; i < 20; i++) await w.submit(probe("one-trip-later", true));
    expect(await count("one-trip-later")).toBe(20);
  });

  it("stops answering: cut, resolved through the mark as not committed, tried once more, then unavailable", async () => {
    const w = writer(500);
    const stuck: WriteOp<number> = {
      notify: emptyKeys(),
      keys: emptyKeys,
      run: (tx) =>
        tx<
          { id: number }[]
        >`INSERT INTO writer_probe (tag) SELECT 'stalled-one-trip' FROM pg_sleep(30) RETURNING id`.then(
          (r) => r[0]!.id,
        ),
    };
    await expect(w.submit(stuck)).rejects.toMatchObject({ code: "database_unavailable" });
    expect(w.stats.stalls).toBe(2);
    await expect(w.submit(probe("after-stall-one-trip", true))).resolves.toBeGreaterThan(0);
    expect(await count("stalled-one-trip")).toBe(0);
    expect(await count("after-stall-one-trip")).toBe(1);
  });
});

describe("the answer to COMMIT is lost after retention deleted the writer's mark", () => {
  // Retention deletes the marks of writers idle past its window (BRAIN_RETENTION_DAYS). A writer
  // that then writes again must mark its batch all the same: a committed batch whose answer was
  // lost and whose mark is missing would read as aborted, be tried again, and be applied twice.
  it.each([true, false])("the batch is known committed and applied once (one round trip: %s)", async (oneTrip) => {
    const proxy = await startPgProxy(db.url);
    const sql = connect(proxy.through(db.url), {
      schema: "brain",
      searchPath: true,
      max: 2,
      applicationName: "brain-test",
    });
    const w = new JournalWriter(sql, { channel: channelFor("brain"), origin: randomUUID() });
    const tag = `answer-lost-${oneTrip}`;
    try {
      await w.submit(probe("before-retention", oneTrip));
      // What retention does to a mark older than its window.
      await db.sql`DELETE FROM writer_marks`;
      proxy.loseNextCommitAnswer();
      await expect(w.submit(probe(tag, oneTrip))).resolves.toBeGreaterThan(0);
      expect(proxy.cuts).toBe(1);
      expect(w.stats.inDoubt).toBe(1);
      expect(await count(tag)).toBe(1);
      // And the writer goes on, its mark in place again.
      await w.submit(probe(`${tag}-after`, oneTrip));
      expect(await count(`${tag}-after`)).toBe(1);
      const [marks] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM writer_marks`;
      expect(marks!.n).toBeGreaterThanOrEqual(1);
    } finally {
      await w.close();
      await sql.end({ timeout: 1 });
      await proxy.close();
    }
  });
});

describe("one connection lost while the database answers", () => {
  it("is not taken for the database away: the batch is tried again on a new connection and commits once", async () => {
    const changes: boolean[] = [];
    const availability = new DatabaseAvailability(db.sql, { onChange: (up) => changes.push(up) });
    const w = new JournalWriter(db.sql, { channel: channelFor("brain"), origin: randomUUID(), availability });
    writers.push(w);
    try {
      // Its backend is terminated under the batch's statement, before COMMIT: known not committed.
      const killedOnce: WriteOp<number> = {
        keys: () => ({ sessions: new Map(), hosts: new Set(), releases: new Map() }),
        run: (tx) =>
          tx<{ id: number }[]>`
            INSERT INTO writer_probe (tag) SELECT 'killed-once' FROM writer_probe_kill_once() RETURNING id`.then(
            (r) => r[0]!.id,
          ),
      };
      await expect(w.submit(killedOnce)).resolves.toBeGreaterThan(0);
      expect(w.stats.retries).toBe(1);
      expect(await count("killed-once")).toBe(1);
      // The database was asked and answered: never marked away, so no request failed meanwhile.
      await expect(w.submit(probe("after-kill"))).resolves.toBeGreaterThan(0);
      expect(availability.available).toBe(true);
      expect(changes).toEqual([]);
    } finally {
      availability.close();
    }
  });

  it("is taken for away when the database does not answer either", async () => {
    const gone = connect("postgres://brain@127.0.0.1:1/none", {
      schema: "brain",
      searchPath: true,
      max: 1,
      connectTimeoutSeconds: 1,
    });
    const availability = new DatabaseAvailability(gone);
    try {
      expect(availability.observe(Object.assign(new Error("lost"), { code: "CONNECTION_CLOSED" }))).toBe(true);
      await until("the database to be taken for away", async () => !availability.available);
    } finally {
      availability.close();
      await gone.end({ timeout: 1 });
    }
  });
});
