/** The message of anything thrown, for error outcomes (bounded by ToolErrorSchema's 8192). */
export function thrownMessage(thrown: unknown): string {
  const text = thrown instanceof Error ? thrown.message : String(thrown);
  return text.slice(0, 8192);
}
