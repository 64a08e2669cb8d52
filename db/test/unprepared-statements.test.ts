import { randomUUID } from "node:crypto";
import { connect, type Sql } from "@aexhq/brain-db/connect";
import { claimPendingCalls } from "@aexhq/brain-db/ops";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";

// Behind a transaction pooler Brain's pools send every statement unprepared and whole: Postgres
// types the parameters, nobody describes them first (db/driver/postgres-3.4.9-fixes.patch). Array parameters
// must bind as arrays then too, the empty one included (it went as '' and failed: a host that
// serves no session yet claimed its calls with one).

let db: TestDatabase;
let pooled: Sql;
beforeAll(async () => {
  db = await createTestDatabase();
  pooled = connect(db.directUrl, { schema: "brain", pooled: true, max: 2, applicationName: "brain-test" });
});
afterAll(async () => {
  await pooled?.end({ timeout: 1 });
  await db?.drop();
});

describe("statements sent unprepared, as through a transaction pooler", () => {
  it("bind array parameters of every kind, empty ones too", async () => {
    const id = randomUUID();
    const [row] = await pooled<{ none: string[]; ids: string[]; seqs: number[]; names: string[] }[]>`
      SELECT ${pooled.array([])}::uuid[] AS none, ${pooled.array([id])}::uuid[] AS ids,
             ${pooled.array([1, 20])}::bigint[] AS seqs, ${pooled.array(["a", 'b"c'])}::text[] AS names`;
    expect(row).toEqual({ none: [], ids: [id], seqs: [1, 20], names: ["a", 'b"c'] });
  });

  it("claim a host's calls for a connection that serves no session yet", async () => {
    const op = claimPendingCalls(randomUUID(), randomUUID(), []);
    expect(await pooled.begin((tx) => op.run(tx))).toEqual([]);
  });
});
