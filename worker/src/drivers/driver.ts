import type { ToolPlacement } from "@aexhq/brain-contracts";
import type { ClaimedWorkerCall } from "@aexhq/brain-db";
import type { CallReporter } from "../call-reporter.js";
import type { InvocationDeps } from "../invocation.js";
import type { Logger } from "../log.js";
import type { RunningCall } from "../running-calls.js";

/**
 * One claimed call in the hands of the driver of its Environment. The driver runs it and reports
 * through `reporter` (results, finish, failures: the same journal rules a host's frames get). It
 * returns once the call's work is over; if `running.stopped` is set (deadline, ended elsewhere,
 * shutdown) someone else records the end, and `running.signal` is aborted.
 */
export interface DriverCall {
  deps: InvocationDeps;
  claimed: ClaimedWorkerCall;
  placement: ToolPlacement;
  reporter: CallReporter;
  running: RunningCall;
  log: Logger;
}

export type Driver = (call: DriverCall) => Promise<void>;
