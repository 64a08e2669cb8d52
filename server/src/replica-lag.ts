import type { Sql } from "@aexhq/brain-db/connect";
import { type ReplicaLag, replicaLag } from "@aexhq/brain-db/ops";
import type { FastifyBaseLogger } from "fastify";

/**
 * BRAIN_READ_URL's lag, sampled each heartbeat and read by the metrics at scrape time. A sample
 * is never awaited by the heartbeat (a replica that does not answer must not hold a beat up), and
 * one runs at a time.
 */
export class ReplicaLagSampler {
  current: ReplicaLag | null = null;
  private sampling = false;
  private failing = false;

  constructor(
    private readonly primary: Sql,
    private readonly read: Sql,
    private readonly log: FastifyBaseLogger,
  ) {}

  sample(): void {
    if (this.read === this.primary || this.sampling) return;
    this.sampling = true;
    void replicaLag(this.primary, this.read)
      .then((sampled) => {
        this.current = sampled;
        this.failing = false;
      })
      .catch((err) => {
        // Once when it starts failing, not once a second.
        if (!this.failing) this.log.warn({ err }, "could not read the read replica's lag");
        this.failing = true;
        this.current = null;
      })
      .finally(() => {
        this.sampling = false;
      });
  }
}
