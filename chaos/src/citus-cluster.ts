// `--citus`: a Citus cluster of the run's own, a coordinator and two workers on loopback
// (@aexhq/brain-db/embedded's startCitusCluster), Brain's tables distributed on it before the
// stack starts, as `brain migrate --citus` places them. Brain is given the coordinator. The
// pg_restart faults restart the first worker, which holds half of every table's shards: Brain's
// own connections stay up while the node under them goes; pg_terminate_backends acts on the
// coordinator's backends, as on one Postgres.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "@aexhq/brain-db/connect";
import { startCitusCluster } from "@aexhq/brain-db/embedded";
import { migrate, placeOnCitus } from "@aexhq/brain-db/migrate";
import type { Cluster } from "./cluster.js";

export async function startCitusChaosCluster(dir: string): Promise<Cluster> {
  const cluster = await startCitusCluster({ shardCount: 8 });
  try {
    const sql = connect(cluster.url, { schema: "brain", max: 2 });
    try {
      await migrate(sql, "brain");
      await placeOnCitus(sql, "brain");
    } finally {
      await sql.end({ timeout: 1 });
    }
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  // The nodes log to the run's own process; the report's Postgres log says where they are.
  const logFile = join(dir, "citus.log");
  writeFileSync(logFile, "a coordinator and two workers; their data directories are removed with the cluster\n");
  return {
    url: cluster.url,
    logFile,
    restart: (mode) => cluster.restartWorker(0, mode),
    stop: () => cluster.destroy(),
  };
}
