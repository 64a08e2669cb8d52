/** Human tables by default, JSON (one document, or NDJSON for streams) with --json. */

export type Row = Record<string, unknown>;

export function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

export function printJson(value: unknown): void {
  out(JSON.stringify(value, null, 2));
}

/** A padded table of `columns` (all rows' own keys when omitted); "(none)" when empty. */
export function printTable(rows: readonly object[], columns?: string[]): void {
  if (rows.length === 0) {
    out("(none)");
    return;
  }
  const cols = columns ?? Object.keys(rows[0]!);
  const cells = rows.map((r) => cols.map((c) => cell((r as Row)[c])));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  out(line(cols.map((c) => c.toUpperCase())));
  for (const row of cells) out(line(row));
}

export function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object") return truncate(JSON.stringify(value), 80);
  return String(value);
}

export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
