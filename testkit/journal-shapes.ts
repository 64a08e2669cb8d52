import { checkRecord, RECORD_KINDS } from "@aexhq/brain-contracts";
import type { Sql } from "@aexhq/brain-db/connect";

/**
 * Checks every record of Brain's own kinds in a test database against its kind's schema
 * (contracts/src/records.ts) and throws, naming the first records that fail, when any does.
 * testkit's servers run it when they close, so every journal the suite writes through a server
 * holds the shapes that the fold, traces, metrics and the SDK read without parsing.
 */
export async function checkJournalShapes(sql: Sql): Promise<void> {
  const rows = await sql<{ session_id: string; seq: number; kind: string; payload: unknown }[]>`
    SELECT session_id, seq, kind, payload FROM brain.records
    WHERE kind = ANY(${sql.array([...RECORD_KINDS])}::text[]) ORDER BY session_id, seq`;
  const failures: string[] = [];
  for (const row of rows) {
    const issues = checkRecord(row);
    if (issues.length === 0) continue;
    const where = issues.map((i) => `${i.path.join(".") || "(payload)"}: ${i.message}`).join("; ");
    failures.push(`${row.kind} #${row.seq} of ${row.session_id}: ${where} in ${JSON.stringify(row.payload)}`);
  }
  if (failures.length > 0) {
    throw new Error(
      `${failures.length} journal record(s) do not match their kind's schema:\n${failures.slice(0, 5).join("\n")}`,
    );
  }
}
