import { errorOutcome } from "@aexhq/brain-contracts";
import type { DriverCall } from "./driver.js";

/** Placeholder until the HTTP Environment driver lands. */
export async function runHttpEnvironmentCall({ reporter }: DriverCall): Promise<void> {
  await reporter.failWith(errorOutcome("setup_failed", "HTTP Environments are not available yet."));
}
