/**
 * One worker job, from claim to the call's end. The claim commits before anything runs, so a job
 * delivered twice, or a call ended or cancelled before its job arrived, runs nothing: at most once.
 * Once claimed, the call is on this worker's connection: if the worker dies, the servers' recovery
 * sweep ends it `unknown` (`worker_lost`), and nobody runs it again. The Environment of the tool's
 * placement picks the driver: components, HTTP Environment descriptors, HTTP application tools.
 */
import { armAt, ToolPlacementSchema } from "@aexhq/brain-contracts";
import { isConnectionError } from "@aexhq/brain-db/connect";
import { type CallKey, claimWorkerCall, timeOutCall } from "@aexhq/brain-db/ops";
import { isUnavailable } from "@aexhq/brain-db/writer";
import { CallReporter, setupFailed } from "./call-reporter.js";
import { runComponent } from "./drivers/component.js";
import type { Driver, InvocationDeps } from "./drivers/driver.js";
import { runHttpApplicationCall } from "./drivers/http-application.js";
import { runHttpEnvironmentCall } from "./drivers/http-environment.js";
import { runMcpCall } from "./drivers/mcp.js";

/** What became of a job, for the worker's metrics: `env` is the placement's environment type when known. */
export interface JobResult {
  outcome: "not_pending" | "expired" | "ran";
  env: string | null;
}

export async function runWorkerJob(deps: InvocationDeps, job: CallKey): Promise<JobResult> {
  const connectionId = deps.connectionId();
  const claimed = await deps.writer.submit(claimWorkerCall(job.sessionId, job.seq, connectionId));
  if (!claimed) {
    deps.log.debug(job, "call not pending (already claimed, ended or cancelled): nothing to run");
    return { outcome: "not_pending", env: null };
  }
  const log = deps.log.child({ sessionId: job.sessionId, seq: job.seq, tool: claimed.tool });
  const running = deps.running.add(job.sessionId, job.seq);
  const reporter = new CallReporter(
    deps.writer,
    { ...job, connectionId },
    deps.maxEmittedBytes,
    log,
    deps.models,
    deps.repairs,
  );
  const timeout = () => deps.writer.submit(timeOutCall(job.sessionId, job.seq));
  // A call that ended by its own report gets its grace; one ended elsewhere (refused a write) stops
  // now, as it would once the worker hears of that end (RunningCalls.stopEnded, which leaves alone
  // the calls whose end is, or may be, their own).
  reporter.onEnded = (how) => {
    if (how === "elsewhere") running.stop("ended");
    else setTimeout(() => running.stop("ended"), deps.afterEndGraceMs).unref();
  };
  running.endsOnItsOwn = () => reporter.endsOnItsOwn;
  if (deps.emitted) reporter.onEmitted = deps.emitted;

  // An invocation whose deadline passed before it got here never runs.
  if (claimed.deadline !== null && claimed.deadline <= Date.now()) {
    deps.running.remove(running);
    await timeout();
    return { outcome: "expired", env: null };
  }
  const disarm =
    claimed.deadline === null
      ? () => {}
      : armAt(claimed.deadline, () => {
          running.stop("deadline");
          timeout().catch((err) => log.error({ err }, "could not record the deadline"));
        });
  let env: string | null = null;
  try {
    const placement = ToolPlacementSchema.safeParse(claimed.placement);
    if (!placement.success) {
      await reporter.failWith(setupFailed(`tool ${claimed.tool}: its placement is missing or malformed`));
      return { outcome: "ran", env };
    }
    env = placement.data.env.type;
    await driverFor(placement.data)({ deps, claimed, placement: placement.data, reporter, running, log });
  } catch (error) {
    // Something of ours failed (a thread that could not start, say): the call is on our
    // connection, so it must not be left open until its deadline.
    if (isConnectionError(error) || isUnavailable(error)) {
      // The database went away under the driver: nobody can say how far the call got (an HTTP
      // request may have gone out), so it is `unknown`, not a permanent setup failure. If the
      // database is still away, the reporter leaves the end to the repairs.
      log.warn({ err: error }, "the database went away while running a call");
      if (!running.stopped) await reporter.failWith({ status: "unknown", cause: "journal_unavailable" });
    } else {
      log.error({ err: error }, "running a call failed");
      if (!running.stopped) await reporter.failWith(setupFailed(`the worker failed: ${(error as Error).message}`));
    }
  } finally {
    disarm();
    deps.running.remove(running);
  }
  return { outcome: "ran", env };
}

function driverFor(placement: { env: { type: string } }): Driver {
  switch (placement.env.type) {
    case "http":
      return runHttpEnvironmentCall;
    case "host":
      return runHttpApplicationCall;
    case "mcp":
      return runMcpCall;
    default:
      return runComponent;
  }
}
