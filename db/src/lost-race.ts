/**
 * A deadlock (40P01) or a serialization failure (40001): the transaction lost to another, was
 * rolled back whole, and may simply run again. On one Postgres Brain's short statements rarely
 * meet one; on a Citus cluster, writes to reference tables (copied to every node) meet the
 * distributed deadlock detector under load.
 */
export function lostToAnother(err: unknown): boolean {
  const code = typeof err === "object" && err !== null && "code" in err ? err.code : undefined;
  return code === "40P01" || code === "40001";
}

/** Runs `work` (a transaction of its own) again, up to `tries` times in all, while it loses a race. */
export async function againIfLost<T>(work: () => Promise<T>, tries = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= tries || !lostToAnother(err)) throw err;
    }
  }
}
