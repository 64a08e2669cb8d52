import { connect } from "@aexhq/brain-db/connect";
import { MAX_PARAMETERS, statementOf } from "@aexhq/brain-db/migrate";
import { afterAll, describe, expect, it } from "vitest";

// A write delegated to a Citus worker goes as the text of its statement and its parameters, each
// passed as text (ops/on-session-shards.ts). Queries are lazy: none of these is ever sent, and the
// pool never connects.

const sql = connect("postgres://brain@127.0.0.1:9/none", { schema: "brain", max: 1 });
afterAll(() => sql.end({ timeout: 0 }));

describe("statementOf", () => {
  it("gives the text postgres.js would send, nested fragments and identifiers included", () => {
    const where = sql`id = ${"7c0f6d0e-0000-4000-8000-000000000000"}::uuid`;
    const q = sql`SELECT last_seq FROM ${sql("brain.sessions")} WHERE ${where} AND last_seq > ${41}::bigint`;
    expect(statementOf(q)).toEqual({
      text: 'SELECT last_seq FROM "brain"."sessions" WHERE id = $1::uuid AND last_seq > $2::bigint',
      parameters: ["7c0f6d0e-0000-4000-8000-000000000000", "41"],
    });
  });

  it("refuses a parameter used without a cast: passed as text, it would be taken for text", () => {
    expect(() => statementOf(sql`SELECT ${1}::int, ${2}`)).toThrow("$2 needs a cast");
    expect(() => statementOf(sql`SELECT ${1}::int WHERE ${"a"} = 'a'`)).toThrow("$2 needs a cast");
  });

  it("refuses more parameters than the function passes on, and values that are not scalars", () => {
    const many = Array.from({ length: MAX_PARAMETERS + 1 }, (_, i) => sql`${i}::int`);
    expect(() => statementOf(sql`SELECT ${many}`)).toThrow(`at most ${MAX_PARAMETERS}`);
    expect(() => statementOf(sql`SELECT ${new Date(0)}::timestamptz`)).toThrow("not object");
  });
});
