// One page of the event stream: bounded by rows and by payload bytes, at least one record, and a
// `more` flag that says whether to read on.
import { randomUUID } from "node:crypto";
import { channelFor } from "@aexhq/brain-db/commits";
import { appendUnchecked, createSession, readRecordPage } from "@aexhq/brain-db/ops";
import { JournalWriter } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";

let db: TestDatabase;
let writer: JournalWriter;
let sessionId: string;
/** Payload sizes (as JSON text) of records 2.., after session_created (seq 1). */
const sizes = [100, 100, 5_000, 100, 20_000, 100, 100];

beforeAll(async () => {
  db = await createTestDatabase();
  writer = new JournalWriter(db.sql, { channel: channelFor("brain"), origin: randomUUID() });
  sessionId = randomUUID();
  const serverId = randomUUID();
  await db.sql`INSERT INTO servers (id) VALUES (${serverId})`;
  await writer.submit(
    createSession({
      id: sessionId,
      hostId: null,
      model: { provider: "scripted", script: [] },
      tools: [],
      metadata: {},
      ownerId: serverId,
      created: { model: { provider: "scripted" }, tools: [], hostId: null },
    }),
  );
  // {"t": "xxx…"} is 9 bytes of JSON text around the x's.
  await writer.submit(
    appendUnchecked(
      sessionId,
      sizes.map((n) => ({ kind: "note", payload: { t: "x".repeat(n - 9) } })),
    ),
  );
});
afterAll(async () => {
  await writer?.close();
  await db?.drop();
});

async function seqs(after: number, rows: number, bytes: number) {
  const page = await readRecordPage(db.sql, sessionId, after, { rows, bytes });
  return { seqs: page.rows.map((r) => r.seq), more: page.more };
}

describe("readRecordPage", () => {
  it("stops before the record that would pass the byte limit, but returns at least one", async () => {
    const [payload] = await db.sql<{ n: number }[]>`
      SELECT octet_length(payload::text)::int AS n FROM records WHERE session_id = ${sessionId} AND seq = 3`;
    expect(payload!.n).toBe(100);
    // Records 2 and 3 are 200 bytes; record 4 (5000) would pass 300.
    expect(await seqs(1, 100, 300)).toEqual({ seqs: [2, 3], more: true });
    expect(await seqs(1, 100, 200)).toEqual({ seqs: [2, 3], more: true });
    expect(await seqs(1, 100, 199)).toEqual({ seqs: [2], more: true });
    expect(await seqs(3, 100, 5_200)).toEqual({ seqs: [4, 5], more: true });
    // A record larger than the limit comes alone.
    expect(await seqs(5, 100, 1_000)).toEqual({ seqs: [6], more: true });
    expect(await seqs(5, 100, 1)).toEqual({ seqs: [6], more: true });
  });

  it("honours the row limit, and says when the journal is exhausted", async () => {
    expect(await seqs(0, 2, 1_000_000)).toEqual({ seqs: [1, 2], more: true });
    expect(await seqs(6, 10, 1_000_000)).toEqual({ seqs: [7, 8], more: false });
    // Exactly the last rows by the row limit: more may exist, one more (empty) read says not.
    expect(await seqs(6, 2, 1_000_000)).toEqual({ seqs: [7, 8], more: true });
    expect(await seqs(8, 2, 1_000_000)).toEqual({ seqs: [], more: false });
  });
});
