import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { channelFor, emptyKeys, Touch } from "@aexhq/brain-db/commits";
import { connect } from "@aexhq/brain-db/connect";
import { JournalWriter, type WriteOp } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { type PgProxy, startPgProxy } from "../../testkit/pg-proxy.js";
import { until } from "../../testkit/wait.js";

// One-round-trip batches go out one behind another on the writer's connection (maxInFlight): a
// batch is sent while the one before it is still unanswered. Each moves the writer's mark on from
// the one before and fails without it, so none commits unless every batch ahead of it did. These
// tests hold a batch in flight with a slow statement (or a slow COMMIT), send more behind it, and
// then make the first one fail, or lose the connection, and check that every write is in the
// table once, in the order it was submitted.

let db: TestDatabase;
const writers: JournalWriter[] = [];

function writer(sql = db.sql): JournalWriter {
  const w = new JournalWriter(sql, { channel: channelFor("brain"), origin: randomUUID() });
  writers.push(w);
  return w;
}

/** One probe row, announced in advance (one round trip); `sleepS` holds the statement that long. */
function probe(tag: string, sleepS = 0): WriteOp<number> {
  return {
    notify: emptyKeys(),
    keys: emptyKeys,
    run: (tx) =>
      tx<{ id: number }[]>`
        INSERT INTO pipeline_probe (tag) SELECT ${tag} FROM pg_sleep(${sleepS}) RETURNING id`.then((r) => r[0]!.id),
  };
}

/**
 * A first write, so that the connection is open and the mark in place: only then does a batch go
 * out behind another. The writer is idle again when this returns.
 */
async function warm(w: JournalWriter): Promise<void> {
  await w.submit(probe("warm"));
  await new Promise((resolve) => setImmediate(resolve));
}

/**
 * One batch sent behind another, so that every statement a batch sent behind another uses is
 * prepared on the connection: postgres.js holds a statement it has not described yet until the
 * answers ahead of it are in, and these tests need the second batch to reach Postgres at once.
 */
async function warmBehind(w: JournalWriter): Promise<void> {
  const before = w.stats.pipelined;
  const first = w.submit(probe("slow-commit-warm"));
  await until("the first batch's write answered", () => w.stats.statements > 0);
  await sleep(50);
  await Promise.all([first, w.submit(probe("warm-behind"))]);
  expect(w.stats.pipelined).toBe(before + 1);
  await new Promise((resolve) => setImmediate(resolve));
}

/** A write that fails in the database: its batch is refused, and it is then tried alone. */
const bad: WriteOp<number> = {
  notify: emptyKeys(),
  keys: emptyKeys,
  run: (tx) =>
    tx<{ id: number }[]>`INSERT INTO pipeline_probe (id, tag) VALUES (-1, NULL) RETURNING id`.then((r) => r[0]!.id),
};

/** Runs a test on a warmed writer whose connection passes a proxy that can lose COMMIT answers. */
async function throughProxy(test: (w: JournalWriter, proxy: PgProxy) => Promise<void>): Promise<void> {
  const proxy = await startPgProxy(db.url);
  const sql = connect(proxy.through(db.url), {
    schema: "brain",
    searchPath: true,
    max: 2,
    applicationName: "brain-test",
  });
  const w = writer(sql);
  try {
    await warm(w);
    await warmBehind(w);
    await test(w, proxy);
  } finally {
    await w.close();
    await sql.end({ timeout: 1 });
    await proxy.close();
  }
}

/** The tags in the table, in insertion order (ids come from a sequence, in commit order here). */
async function tags(prefix: string): Promise<string[]> {
  const rows = await db.sql<{ tag: string }[]>`
    SELECT tag FROM pipeline_probe WHERE tag LIKE ${`${prefix}%`} ORDER BY id`;
  return rows.map((r) => r.tag);
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`CREATE TABLE pipeline_probe (id bigserial PRIMARY KEY, tag text NOT NULL)`;
  // A row tagged 'slow-commit' makes its COMMIT take a while (a deferred trigger): the answers to
  // the batch's writes are back, the batch behind it has gone out, and COMMIT is still running.
  // 'killed-commit' ends its own backend during COMMIT instead, the first time.
  await db.sql.unsafe(`
    CREATE SEQUENCE pipeline_kills;
    CREATE FUNCTION pipeline_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.tag LIKE 'slow-commit%' THEN
        PERFORM pg_sleep(0.5);
      ELSIF NEW.tag LIKE 'killed-commit%' THEN
        PERFORM pg_sleep(0.5);
        IF nextval('pipeline_kills') = 1 THEN
          PERFORM pg_terminate_backend(pg_backend_pid());
        END IF;
      END IF;
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER pipeline_commit AFTER INSERT ON pipeline_probe
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pipeline_commit();`);
});

afterAll(async () => {
  await Promise.all(writers.map((w) => w.close()));
  await db?.drop();
});

describe("batches sent one behind another", () => {
  it("commit in submission order, each write once, while earlier batches are unanswered", async () => {
    const w = writer();
    await warm(w);
    const submitted: Promise<number>[] = [];
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 5; i++) submitted.push(w.submit(probe(`order-${String(submitted.length).padStart(3, "0")}`)));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const ids = await Promise.all(submitted);
    expect(w.stats.pipelined).toBeGreaterThan(0);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const written = await tags("order-");
    expect(written).toEqual([...written].sort());
    expect(written).toHaveLength(100);
  });

  it("a refused batch sends those behind it back to the queue, after its own writes' retry", async () => {
    const w = writer();
    await warm(w);
    // In flight and held for a second: the writes submitted now gather, and go out behind it.
    const first = w.submit(probe("refused-0", 1));
    const ahead = [w.submit(probe("refused-1", 0.5)), w.submit(bad), w.submit(probe("refused-2"))];
    await until("the batch with the bad write sent behind the first", () => w.stats.pipelined >= 1);
    // Held half a second in turn: these go out behind it, before it is refused.
    const behind = [w.submit(probe("refused-3")), w.submit(probe("refused-4")), w.submit(probe("refused-5"))];
    await expect(first).resolves.toBeGreaterThan(0);
    const settled = await Promise.allSettled([...ahead, ...behind]);
    expect(settled.map((r) => r.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "fulfilled",
    ]);
    expect(w.stats.fallbacks).toBe(1);
    expect(w.stats.requeued).toBe(3);
    expect(await tags("refused-")).toEqual([
      "refused-0",
      "refused-1",
      "refused-2",
      "refused-3",
      "refused-4",
      "refused-5",
    ]);
  });
});

describe("the NOTIFY of a batch", () => {
  it("is delivered with its commit: whoever hears it finds the batch's writes, for every batch in flight", async () => {
    const channel = `pipeline_${randomUUID().slice(0, 8)}`;
    const w = new JournalWriter(db.sql, { channel, origin: randomUUID() });
    writers.push(w);
    await warm(w);
    // Each announces a session key (so its batch sends a NOTIFY), and holds its statement a while:
    // a NOTIFY sent outside its batch's transaction would be heard long before the row is there.
    const announced = (tag: string): WriteOp<number> => {
      const keys = emptyKeys();
      keys.sessions.set(randomUUID(), Touch.other);
      return { ...probe(tag, 0.2), notify: keys, keys: () => keys };
    };
    const heard: Promise<number>[] = [];
    const listening = await db.sql.listen(channel, () => {
      heard.push(
        db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pipeline_probe WHERE tag LIKE 'heard-%'`.then(
          (r) => r[0]!.n,
        ),
      );
    });
    try {
      const first = w.submit(announced("heard-1"));
      await until("the first batch's write answered", () => w.stats.statements > 1);
      await Promise.all([first, w.submit(announced("heard-2"))]);
      expect(w.stats.pipelined).toBeGreaterThanOrEqual(1);
      await until("both NOTIFYs heard", () => heard.length >= 2);
      // What each listener found when it heard: the batch it was told of, at least.
      expect(await Promise.all(heard)).toEqual([1, 2]);
    } finally {
      await listening.unlisten();
    }
  });
});

describe("a one-round-trip batch", () => {
  it("is one pipeline: Postgres answers it once, after its commit (no BEGIN, no COMMIT of its own)", async () => {
    await throughProxy(async (w, proxy) => {
      const readies = proxy.readies;
      const batches = w.stats.batches;
      await Promise.all([w.submit(probe("answered-once-a")), w.submit(probe("answered-once-b"))]);
      expect(await tags("answered-once-")).toEqual(["answered-once-a", "answered-once-b"]);
      // The two writes go in one batch or two: one answer (ReadyForQuery) a batch.
      expect(w.stats.batches - batches).toBeGreaterThanOrEqual(1);
      expect(proxy.readies - readies).toBe(w.stats.batches - batches);
    });
  });
});

describe("the connection is lost with batches in flight", () => {
  it("the batch whose COMMIT was killed and the one behind it are tried again, each once", async () => {
    const w = writer();
    await warm(w);
    await warmBehind(w);
    // Its COMMIT takes half a second and then ends its backend: the batch behind it is out by then.
    const first = w.submit(probe("killed-commit-a"));
    await sleep(50);
    const behind = [w.submit(probe("killed-commit-b")), w.submit(probe("killed-commit-c"))];
    await expect(Promise.all([first, ...behind])).resolves.toHaveLength(3);
    expect(w.stats.pipelined).toBe(2);
    expect(w.stats.inDoubt).toBeGreaterThanOrEqual(1);
    expect(await tags("killed-commit-")).toEqual(["killed-commit-a", "killed-commit-b", "killed-commit-c"]);
  });

  it("the mark tells which committed: the first is kept, the one behind it once, heard or not", async () => {
    await throughProxy(async (w, proxy) => {
      proxy.loseNextCommitAnswer();
      // Its write is answered at once, its COMMIT takes half a second: the batch behind it goes
      // out meanwhile, and the answer to the first COMMIT is what the proxy loses, cutting the
      // connection. Postgres may still run the batch behind it to its COMMIT (it has it all)
      // or stop at its first answer; the mark says which.
      const first = w.submit(probe("slow-commit-a"));
      await sleep(50);
      const behind = [w.submit(probe("lost-b")), w.submit(probe("lost-c"))];
      await expect(first).resolves.toBeGreaterThan(0);
      const settled = await Promise.allSettled(behind);
      expect(proxy.cuts).toBe(1);
      expect(w.stats.pipelined).toBe(2);
      expect(w.stats.inDoubt).toBe(1);
      if (settled.every((r) => r.status === "fulfilled")) {
        // Not committed: tried once more, on a new connection.
        expect(w.stats.retries).toBe(1);
      } else {
        // Committed, unheard: what its writes returned is unknown, and they are not tried again.
        for (const r of settled) expect(r).toMatchObject({ status: "rejected", reason: { code: "commit_unknown" } });
        expect(w.stats.retries).toBe(0);
      }
      expect(await tags("slow-commit-a")).toEqual(["slow-commit-a"]);
      expect(await tags("lost-")).toEqual(["lost-b", "lost-c"]);
      await w.submit(probe("lost-after"));
      expect(await tags("lost-after")).toEqual(["lost-after"]);
    });
  });

  it("both committed, the answers lost: the first's writes resolve, the one behind's are commit_unknown, none twice", async () => {
    await throughProxy(async (w, proxy) => {
      // Postgres runs both batches to their COMMIT; the writer hears neither COMMIT answer, nor
      // the answers of the second batch's writes.
      proxy.loseCommitAnswers(2);
      const first = w.submit(probe("slow-commit-both-a"));
      await sleep(50);
      const behind = [w.submit(probe("both-b")), w.submit(probe("both-c"))];
      await expect(first).resolves.toBeGreaterThan(0);
      for (const b of behind) await expect(b).rejects.toMatchObject({ code: "commit_unknown" });
      expect(proxy.cuts).toBe(1);
      expect(w.stats.pipelined).toBe(2);
      expect(w.stats.retries).toBe(0);
      expect(await tags("slow-commit-both-a")).toEqual(["slow-commit-both-a"]);
      expect(await tags("both-")).toEqual(["both-b", "both-c"]);
    });
  });
});
