// BRAIN_SCHEMA is checked when the configuration is parsed, before any database is touched:
// Brain owns its schema (it creates, migrates and may drop it), so shared and system schemas are
// refused with a message that says why.

import { parseEnv, SharedEnvSchema } from "@aexhq/brain-db/connect";
import { describe, expect, it } from "vitest";

const parse = (BRAIN_SCHEMA: string) => parseEnv(SharedEnvSchema, { BRAIN_SCHEMA });

describe("BRAIN_SCHEMA", () => {
  it("accepts a schema of Brain's own, and defaults to brain", () => {
    expect(parseEnv(SharedEnvSchema, {}).BRAIN_SCHEMA).toBe("brain");
    for (const name of ["brain", "other", "_x", "tenant_42", "a".repeat(43), "public_brain", "pgx"]) {
      expect(parse(name).BRAIN_SCHEMA).toBe(name);
    }
  });

  it("refuses public and Postgres system schemas, naming the variable and the reason", () => {
    for (const name of ["public", "pg_catalog", "information_schema", "pg_toast", "pg_temp_3", "pg_"]) {
      expect(() => parse(name), name).toThrow(/invalid configuration: BRAIN_SCHEMA: .*(shared|system schema)/);
    }
  });

  it("refuses names that are not plain identifiers, or too long for <schema>_boss", () => {
    for (const name of ["Bad-Name", "", "1abc", "a b", "brain;drop", '"x"', "a".repeat(44), "é"]) {
      expect(() => parse(name), name).toThrow(/invalid configuration: BRAIN_SCHEMA: lower-case letters/);
    }
  });
});
