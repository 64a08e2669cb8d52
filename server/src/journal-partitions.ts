import { periodic } from "@aexhq/brain-contracts";
import { ensureJournalPartitions } from "@aexhq/brain-db/ops";
import type { Services } from "./services.js";

/** What partition upkeep uses of the server. */
export type PartitionDeps = Pick<Services, "sql" | "log" | "availability">;

/** How often a server makes sure the coming weeks' partitions exist (each run is idempotent). */
export const PARTITION_PERIOD_MS = 6 * 3600_000;

/**
 * Keeps the journal's weekly partitions ahead of the sessions being created (migration 0023): at
 * start, then every PARTITION_PERIOD_MS. Should it fail for long (the database away for weeks),
 * new sessions' rows go to the default partition, which works, only without retention by week.
 * Returns a stop function.
 */
export function startPartitionUpkeep(rt: PartitionDeps, periodMs = PARTITION_PERIOD_MS): () => void {
  const upkeep = periodic(
    async () => {
      const made = await ensureJournalPartitions(rt.sql);
      if (made > 0) rt.log.info({ made }, "journal partitions made for the weeks ahead");
    },
    periodMs,
    {
      onError: (err) => {
        rt.availability.warnUnlessAway(err, () => rt.log.warn({ err }, "making journal partitions failed"));
      },
      firstAfterMs: Math.floor(Math.random() * 5_000),
    },
  );
  return () => void upkeep.stop();
}
