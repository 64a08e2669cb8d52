// Keeps every process of the run alive: whatever is down and not held down by a fault is started
// again, once a second. An exit the run did not cause is recorded by Managed; restarting it keeps
// the load going, so one crash does not hide what else would have gone wrong.
import { setTimeout as sleep } from "node:timers/promises";
import type { Managed } from "./processes.js";

export class Supervisor {
  private readonly held = new Set<Managed>();
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  readonly startFailures: string[] = [];

  constructor(private readonly processes: Managed[]) {}

  hold(p: Managed): void {
    this.held.add(p);
  }
  release(p: Managed): void {
    this.held.delete(p);
  }

  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        await this.reviveAll();
        await sleep(1_000);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** Starts what is down (servers first: hosts reattach through them). */
  async reviveAll(): Promise<void> {
    for (const p of this.processes) {
      if (p.alive || this.held.has(p)) continue;
      try {
        await p.restart();
      } catch (error) {
        this.startFailures.push((error as Error).message.split("\n")[0] ?? "");
      }
    }
  }
}
