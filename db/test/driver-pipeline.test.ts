import { type Socket, connect as tcpConnect } from "node:net";
import type Postgres from "postgres";
import type { PendingQuery, ReservedSql, Row, Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmptyDatabase, type TestDatabase } from "../../testkit/database.js";

// The patched driver's pipelines (db/driver/postgres-3.4.9-pipelines.patch), on a real Postgres: a query
// marked `pipelined` goes without a Sync, and the next one not so marked ends the pipeline.
const { default: postgres } = (await import(new URL("../dist/driver/postgres/index.js", import.meta.url).href)) as {
  default: typeof Postgres;
};

let db: TestDatabase;
let sql: Sql;
let r: ReservedSql;
beforeAll(async () => {
  db = await createEmptyDatabase();
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
  await sql`CREATE SCHEMA pipeline_test`;
  await sql`CREATE TABLE pipeline_test.pipe (k text PRIMARY KEY, v int NOT NULL)`;
  r = await sql.reserve();
});
afterAll(async () => {
  r?.release();
  await sql?.end({ timeout: 5 });
  await db?.drop();
});

function inPipeline<T extends readonly Row[]>(q: PendingQuery<T>): Promise<T> {
  (q as unknown as { options: { pipelined?: boolean } }).options.pipelined = true;
  return q.execute();
}

const keys = async (prefix: string) =>
  (await sql<{ k: string }[]>`SELECT k FROM pipeline_test.pipe WHERE k LIKE ${`${prefix}%`} ORDER BY k`).map(
    (x) => x.k,
  );

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: { code?: string }) => e.code ?? String(e),
  );

/**
 * A one-connection pool of the patched driver on a socket of the test's, which `watch` may wrap
 * before the driver sees it (postgres.js takes a caller's socket; its types leave the option out).
 */
function onSocket(watch: (s: Socket) => void): Sql {
  const url = new URL(db.url);
  const options = {
    max: 1,
    socket: () =>
      new Promise<Socket>((resolve, reject) => {
        const s = tcpConnect(Number(url.port || 5432), url.hostname);
        watch(s);
        s.once("connect", () => resolve(s));
        s.once("error", reject);
      }),
  };
  return postgres(db.url, options as Parameters<typeof postgres>[1]);
}

describe("a pipeline of the patched driver", () => {
  it("runs as one transaction, committed at the Sync its last query carries", async () => {
    const a = inPipeline(r`INSERT INTO pipeline_test.pipe VALUES ('one-a', 1) RETURNING txid_current()::text AS x`);
    const b = inPipeline(r`INSERT INTO pipeline_test.pipe VALUES ('one-b', 2) RETURNING txid_current()::text AS x`);
    const end = r`SELECT txid_current()::text AS x, now() = statement_timestamp() AS alone`.execute();
    const [ra, rb, rend] = await Promise.all([a, b, end]);
    // One transaction: one id, and its start (now()) is not the last statement's.
    expect(rb[0]!.x).toBe(ra[0]!.x);
    expect(rend[0]!.x).toBe(ra[0]!.x);
    expect(rend[0]!.alone).toBe(false);
    expect(await keys("one-")).toEqual(["one-a", "one-b"]);
  });

  it("rolls back whole when a statement fails: those after it are rejected with its error", async () => {
    const a = codeOf(inPipeline(r`INSERT INTO pipeline_test.pipe VALUES ('fail-a', 1)`));
    const bad = codeOf(inPipeline(r`INSERT INTO pipeline_test.pipe VALUES ('fail-b', 1 / 0)`));
    const c = codeOf(inPipeline(r`INSERT INTO pipeline_test.pipe VALUES ('fail-c', 3)`));
    const end = codeOf(r`SELECT 1`.execute());
    expect(await Promise.all([a, bad, c, end])).toEqual(["resolved", "22012", "22012", "22012"]);
    expect(await keys("fail-")).toEqual([]);
    // The connection goes on: the next statement runs alone and commits.
    await r`INSERT INTO pipeline_test.pipe VALUES ('fail-after', 4)`;
    expect(await keys("fail-")).toEqual(["fail-after"]);
  });

  it("holds back behind a statement it must describe first, then sends the rest whole", async () => {
    // Parameters on a statement this connection has not prepared: postgres.js describes it first.
    const k = `held-${Date.now()}`;
    const a = inPipeline(r`INSERT INTO pipeline_test.pipe VALUES ('held-a', 1) RETURNING txid_current()::text AS x`);
    const b = inPipeline(
      r`INSERT INTO pipeline_test.pipe VALUES (${k}, ${2}) RETURNING txid_current()::text AS x, ${k} AS fresh`,
    );
    const c = inPipeline(r`INSERT INTO pipeline_test.pipe VALUES ('held-c', 3) RETURNING txid_current()::text AS x`);
    const end = r`SELECT txid_current()::text AS x`.execute();
    const [ra, rb, rc, rend] = await Promise.all([a, b, c, end]);
    expect(new Set([ra[0]!.x, rb[0]!.x, rc[0]!.x, rend[0]!.x]).size).toBe(1);
    expect(await keys("held-")).toEqual(["held-a", "held-c", k].sort());
  });

  it("rolls back whole when a statement described first fails, and rejects the rest as they come", async () => {
    const a = codeOf(inPipeline(r`INSERT INTO pipeline_test.pipe VALUES ('parse-a', 1)`));
    const bad = codeOf(inPipeline(r`INSERT INTO no_such_table VALUES (${1})`));
    const c = codeOf(inPipeline(r`INSERT INTO pipeline_test.pipe VALUES ('parse-c', ${3})`));
    const end = codeOf(r`SELECT ${1}::int AS one`.execute());
    expect(await Promise.all([a, bad, c, end])).toEqual(["resolved", "42P01", "42P01", "42P01"]);
    expect(await keys("parse-")).toEqual([]);
    const [after] = await r`SELECT ${2}::int AS two`;
    expect(after!.two).toBe(2);
  });

  it("goes to the socket in one write, however large its statements", async () => {
    let writes = 0;
    const own = onSocket((s) => {
      const write = s.write.bind(s) as (...args: unknown[]) => boolean;
      s.write = ((...args: unknown[]) => {
        writes++;
        return write(...args);
      }) as typeof s.write;
    });
    try {
      const c = await own.reserve();
      try {
        // Each statement's parameter alone is past the driver's 1 KiB threshold for writing at once.
        const big = "x".repeat(4096);
        const pipeline = () => [
          inPipeline(c`SELECT length(${big}) AS n`),
          inPipeline(c`SELECT length(${big}) + 1 AS n`),
          c`SELECT 1 AS done`.execute(),
        ];
        await Promise.all(pipeline()); // prepares the statements: nothing is held for a Describe
        const before = writes;
        const [[a], [b]] = (await Promise.all(pipeline())) as unknown as [{ n: number }[], { n: number }[]];
        expect([a!.n, b!.n]).toEqual([4096, 4097]);
        expect(writes - before).toBe(1);
      } finally {
        c.release();
      }
    } finally {
      await own.end({ timeout: 5 });
    }
  });

  it("writes the query carrying the Sync at once, not when the event loop next comes round", async () => {
    // Warm: both statements prepared, so nothing waits for a Describe's answer.
    const warm = inPipeline(r`SELECT 1 AS x`);
    await Promise.all([warm, r`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`.execute()]);
    const head = inPipeline(r`SELECT 1 AS x`);
    const end = r`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`.execute();
    // postgres.js hands a query to its connection a microtask after it is asked to run; a few
    // microtasks later (no turn of the event loop) both have been. The process then stays busy
    // for a second, as a server handling a batch's answers would: the pipeline must already be
    // with Postgres, and run, meanwhile.
    for (let i = 0; i < 5; i++) await null;
    const busyUntil = Date.now() + 1_000;
    while (Date.now() < busyUntil) {
      // spin
    }
    const [, [ran]] = await Promise.all([head, end]);
    expect(ran!.ms).toBeLessThan(busyUntil);
  });

  it("sets TCP_NODELAY: Postgres answers nothing before a pipeline's Sync, so no answer acknowledges its head", async () => {
    const calls: boolean[] = [];
    const own = onSocket((s) => {
      const set = s.setNoDelay.bind(s);
      s.setNoDelay = (on?: boolean) => {
        calls.push(on ?? true);
        return set(on);
      };
    });
    try {
      await own`SELECT 1`;
      expect(calls).toEqual([true]);
    } finally {
      await own.end({ timeout: 5 });
    }
  });
});
