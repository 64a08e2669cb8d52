import { periodic } from "@aexhq/brain-contracts";
import { prune } from "@aexhq/brain-db/ops";
import type { Services } from "./services.js";

/** What retention uses of the server. */
export type RetentionDeps = Pick<Services, "config" | "sql" | "log" | "availability" | "distributed">;

/** How often a server tries to prune; only the one holding the advisory lock does the work. */
export const RETENTION_PERIOD_MS = 10 * 60_000;

/**
 * Background retention: every period, each server tries the prune lock; the one that gets it
 * deletes what is older than BRAIN_RETENTION_DAYS in small batches (see prune in @aexhq/brain-db),
 * off the hot path. BRAIN_RETENTION_DAYS=0 keeps everything. Returns a stop function. On a Citus
 * cluster, ended sessions go one a transaction and the shared tables a page at a time (PruneOptions.citus).
 */
export function startRetention(rt: RetentionDeps, periodMs = RETENTION_PERIOD_MS): () => void {
  if (rt.config.retentionDays <= 0) return () => {};
  const stop = new AbortController();
  const pruning = periodic(
    async () => {
      const counts = await prune(rt.sql, rt.config.schema, {
        olderThanSeconds: rt.config.retentionDays * 86_400,
        signal: stop.signal,
        citus: rt.distributed,
      });
      if (counts && Object.values(counts).some((n) => n > 0)) rt.log.info({ pruned: counts }, "retention pruned");
    },
    periodMs,
    {
      onError: (err) => {
        rt.availability.warnUnlessAway(err, () => rt.log.warn({ err }, "retention prune failed"));
      },
      // Not at once: a fleet restarting together would all try at the same moment.
      firstAfterMs: Math.floor(Math.random() * Math.min(periodMs, 5_000)),
    },
  );
  return () => {
    stop.abort();
    void pruning.stop();
  };
}
