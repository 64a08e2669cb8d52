/** Schema names come from configuration; they are validated, then quoted, never interpolated raw. */
export const SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,47}$/;

export function assertSchemaName(name: string): string {
  if (!SCHEMA_NAME_PATTERN.test(name)) {
    throw new Error(`invalid schema name ${JSON.stringify(name)}: use lower-case letters, digits and _`);
  }
  return name;
}

export function quoteIdent(name: string): string {
  return `"${assertSchemaName(name)}"`;
}

/** pg-boss keeps its tables in a schema named after Brain's. */
export function bossSchemaFor(schema: string): string {
  return `${schema}_boss`;
}
