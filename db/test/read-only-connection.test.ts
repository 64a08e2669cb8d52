import { randomUUID } from "node:crypto";
import { channelFor, emptyKeys } from "@aexhq/brain-db/commits";
import { connect, isConnectionError, type Sql } from "@aexhq/brain-db/connect";
import { JournalWriter, type WriteOp } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";

// A primary demoted under Brain's feet (a managed fail-over that keeps the old host as a standby)
// answers every write on the connections it still holds with 25006, read_only_sql_transaction.
// Such a connection must be replaced, not kept: the next one goes where target_session_attrs
// says. Here a trigger answers 25006, as the demoted server would, to the first write of a row
// tagged 'demoted-…' (a sequence per tag counts, outside the aborted transaction).

let db: TestDatabase;
let pool: Sql;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql.unsafe(`
    CREATE TABLE demoted_probe (id bigserial PRIMARY KEY, tag text NOT NULL);
    CREATE SEQUENCE demoted_pool;
    CREATE SEQUENCE demoted_writer;
    CREATE FUNCTION demoted_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.tag LIKE 'demoted-%' AND nextval(replace(NEW.tag, '-', '_')) = 1 THEN
        RAISE EXCEPTION 'cannot execute INSERT in a read-only transaction' USING ERRCODE = '25006';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER demoted_refuse BEFORE INSERT ON demoted_probe FOR EACH ROW EXECUTE FUNCTION demoted_refuse();`);
  pool = connect(db.directUrl, { schema: "brain", searchPath: true, max: 1, applicationName: "brain-test-pool" });
});
afterAll(async () => {
  await pool?.end({ timeout: 1 });
  await db?.drop();
});

const backend = async (sql: Sql) => (await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`)[0]!.pid;

describe("a connection whose server refuses writes as read-only", () => {
  it("is a lost connection, and the pool replaces it", async () => {
    const before = await backend(pool);
    const refused = await pool`INSERT INTO demoted_probe (tag) VALUES ('demoted-pool')`.catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "25006" });
    expect(isConnectionError(refused)).toBe(true);
    // The one connection of the pool was ended; the next statement runs on a new backend.
    expect(await backend(pool)).not.toBe(before);
  });

  it("in the journal writer, is replaced and the batch committed once on the next", async () => {
    const writer = new JournalWriter(db.sql, { channel: channelFor("brain"), origin: randomUUID() });
    try {
      const insert = (tag: string): WriteOp<number> => ({
        keys: emptyKeys,
        run: (tx) =>
          tx<{ id: number }[]>`INSERT INTO demoted_probe (tag) VALUES (${tag}) RETURNING id`.then((r) => r[0]!.id),
      });
      await writer.submit(insert("before"));
      const [first] = await db.sql<{ pid: number }[]>`
        SELECT pid FROM pg_stat_activity WHERE application_name = 'brain-writer' AND datname = current_database()`;
      await writer.submit(insert("demoted-writer"));
      const rows = await db.sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM demoted_probe WHERE tag = 'demoted-writer'`;
      expect(rows[0]!.n).toBe(1);
      const [next] = await db.sql<{ pid: number }[]>`
        SELECT pid FROM pg_stat_activity WHERE application_name = 'brain-writer' AND datname = current_database()`;
      expect(next?.pid).not.toBe(first?.pid);
    } finally {
      await writer.close();
    }
  });
});
