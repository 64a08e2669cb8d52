/** Schema names come from configuration; they are validated, then quoted, never interpolated raw. */
export const SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,47}$/;

export function assertSchemaName(name: string): string {
  if (!SCHEMA_NAME_PATTERN.test(name)) {
    throw new Error(`invalid schema name ${JSON.stringify(name)}: use lower-case letters, digits and _`);
  }
  return name;
}

/**
 * Why a name cannot hold Brain's tables, or null. Brain creates, migrates and (in tests) drops its
 * schema as its own: `public` is shared with whatever else lives in the database, and Postgres
 * reserves `pg_*` names and keeps its catalogs in `pg_catalog`, `pg_toast` and
 * `information_schema`. The pg-boss schema (`<name>_boss`) must fit the pattern too.
 */
export function brainSchemaProblem(name: string): string | null {
  if (!SCHEMA_NAME_PATTERN.test(name) || !SCHEMA_NAME_PATTERN.test(bossSchemaFor(name))) {
    return "lower-case letters, digits and _ (at most 43 characters)";
  }
  if (name === "public") return "public is shared with the rest of the database; choose a schema of Brain's own";
  if (name === "information_schema" || name.startsWith("pg_")) {
    return `${name} is a Postgres system schema name; choose a schema of Brain's own`;
  }
  return null;
}

export function quoteIdent(name: string): string {
  return `"${assertSchemaName(name)}"`;
}

/** pg-boss keeps its tables in a schema named after Brain's. */
export function bossSchemaFor(schema: string): string {
  return `${schema}_boss`;
}
