/**
 * A uuid as one key, from any spelling Postgres accepts (capitals, braces, hyphens anywhere or
 * none): Postgres's own spelling, lower case in 8-4-4-4-12 groups. Writes to one session share no
 * statement whatever the spelling (writer/merge.ts), and a statement's rows, which Postgres
 * returns in its own spelling, find their write by it. Ids mostly come from Postgres already, so
 * those are returned as they are, without a copy.
 */
export function uuidKey(id: string): string {
  if (id.length === 36 && isCanonical(id)) return id;
  const hex = id.toLowerCase().replace(/[^0-9a-f]/g, "");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Lower-case hex digits with hyphens at 8, 13, 18 and 23 (the length is checked by the caller). */
function isCanonical(id: string): boolean {
  for (let i = 0; i < 36; i++) {
    const c = id.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false;
    } else if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}
