// isDataException tells the writes that failed on their input (SQLSTATE class 22) from every other
// failure: the former are answered as the input's fault (invalid_request, unstorable_text), the
// latter stay internal errors. Checked against real Postgres errors.
import { isDataException } from "@aexhq/brain-db/connect";
import { expect, it } from "vitest";
import { createTestDatabase } from "../../testkit/database.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";

const db = startedBeforeAll(() => createTestDatabase(), { stop: (d) => d.drop() });

async function errorOf(run: () => Promise<unknown>): Promise<unknown> {
  return run().then(
    () => null,
    (error: unknown) => error,
  );
}

it("is true for Postgres data exceptions: NUL and unpaired surrogates in jsonb and text, numbers out of range", async () => {
  const cases = [
    () => db.sql`SELECT ${'{"t":"a\\u0000b"}'}::text::jsonb`,
    () => db.sql`SELECT ${'{"t":"\\ud800"}'}::text::jsonb`,
    () => db.sql`SELECT ${"a\u0000b"}::text`,
    () => db.sql`SELECT ${"99999999999999999999"}::bigint`,
  ];
  for (const run of cases) {
    const error = await errorOf(run);
    expect(error, String(run)).not.toBeNull();
    expect(isDataException(error), String((error as Error).message)).toBe(true);
  }
});

it("is false for other failures, and for errors that only borrow a class-22 code", async () => {
  expect(isDataException(await errorOf(() => db.sql`SELECT * FROM no_such_table`))).toBe(false);
  expect(isDataException(await errorOf(() => db.sql`SELEC 1`))).toBe(false);
  expect(isDataException(Object.assign(new Error("x"), { code: "22P05" }))).toBe(false);
  expect(isDataException(null)).toBe(false);
  expect(isDataException("22P05")).toBe(false);
});
