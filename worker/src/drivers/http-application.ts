import { errorOutcome } from "@aexhq/brain-contracts";
import type { DriverCall } from "./driver.js";

/** Placeholder until HTTP application tools land. */
export async function runHttpApplicationCall({ reporter }: DriverCall): Promise<void> {
  await reporter.failWith(errorOutcome("setup_failed", "HTTP application tools are not available yet."));
}
