/**
 * The advisory lock key a schema's migrations are applied under, one per schema so Brains in
 * different schemas of one database migrate independently (`hashtextextended(key, 0)`).
 */
export function migrateLockKey(schema: string): string {
  return `brain.migrate:${schema}`;
}
