/**
 * One component job, from claim to the call's end. The claim commits before anything runs, so a
 * job delivered twice, or a call ended or cancelled before its job arrived, runs nothing: at most
 * once. Once claimed, the call is on this worker's connection: if the worker dies, the servers'
 * recovery sweep ends it `unknown` (`worker_lost`), and nobody runs it again.
 */
import { claimComponentCall, endCalls, type JournalWriter, type Sql } from "@aexhq/brain-db";
import { CallReporter, setupFailed as setupFailedOutcome } from "./call-reporter.js";
import type { ComponentCache } from "./component-cache.js";
import type { Logger } from "./log.js";
import { trapOutcome } from "./outcomes.js";
import type { RunningCall, RunningCalls } from "./running-calls.js";
import { prepareCall } from "./setup.js";
import type { SparePool } from "./spare-threads.js";
import { startThread, type ThreadEnd } from "./thread-runner.js";
import { armAt } from "./timers.js";

export interface InvocationDeps {
  sql: Sql;
  writer: JournalWriter;
  cache: ComponentCache;
  running: RunningCalls;
  spares: SparePool;
  /** The connection this worker's claims go on (it changes if the worker had to re-register). */
  connectionId(): string;
  maxEmittedBytes: number;
  log: Logger;
}

/** After its call ended, a component still running gets this long to return before it is stopped. */
const AFTER_END_GRACE_MS = 1000;

export async function runComponentJob(deps: InvocationDeps, job: { sessionId: string; seq: number }): Promise<void> {
  const connectionId = deps.connectionId();
  const claimed = await deps.writer.submit(claimComponentCall(job.sessionId, job.seq, connectionId));
  if (!claimed) {
    deps.log.debug(job, "component call not pending (already claimed, ended or cancelled): nothing to run");
    return;
  }
  const log = deps.log.child({ sessionId: job.sessionId, seq: job.seq, tool: claimed.tool });
  const call = deps.running.add(job.sessionId, job.seq);
  const reporter = new CallReporter(deps.writer, { ...job, connectionId }, deps.maxEmittedBytes, log);
  const timeout = () =>
    deps.writer.submit(
      endCalls({ sessionId: job.sessionId, seqs: [job.seq] }, { status: "timeout", cause: "deadline" }),
    );
  reporter.onEnded = () => setTimeout(() => call.stop("ended"), AFTER_END_GRACE_MS).unref();

  // An invocation whose deadline passed before it got here never runs.
  if (claimed.deadline !== null && claimed.deadline <= Date.now()) {
    deps.running.remove(call);
    await timeout();
    return;
  }
  const disarm =
    claimed.deadline === null
      ? () => {}
      : armAt(claimed.deadline, () => {
          call.stop("deadline");
          timeout().catch((err) => log.error({ err }, "could not record the deadline"));
        });
  try {
    const started = Date.now();
    const setup = await prepareCall(deps.sql, deps.cache, claimed);
    if (!setup.ok) {
      log.warn({ outcome: setup.outcome }, "component setup failed");
      if (!call.stopped) await reporter.failWith(setup.outcome);
      return;
    }
    const { component, invocation, workspace } = setup.prepared;
    try {
      if (call.stopped) return;
      log.debug(
        { sha256: component.sha256, transpiled: component.transpiled, setupMs: Date.now() - started },
        "running",
      );
      const invoke = { invocation, workspaceDir: workspace?.dir ?? null };
      const thread = startThread(deps.spares.take(component), invoke, reporter, log);
      call.attach(thread);
      // The next call of this component finds a thread ready (it starts on another core while
      // this one runs).
      deps.spares.replenish(component);
      const end = await thread.ended;
      await settle(reporter, call, end, thread.stderrTail, log);
    } finally {
      await workspace?.remove();
    }
  } catch (error) {
    // Something of ours failed (a thread that could not start, say): the call is on our
    // connection, so it must not be left open until its deadline.
    log.error({ err: error }, "running a component failed");
    if (!call.stopped) await reporter.failWith(setupFailedOutcome(`the worker failed: ${(error as Error).message}`));
  } finally {
    disarm();
    deps.running.remove(call);
  }
}

/** Journals how `run` ended, unless the call was stopped from outside (then its end is recorded). */
async function settle(
  reporter: CallReporter,
  call: RunningCall,
  end: ThreadEnd,
  stderrTail: string[],
  log: Logger,
): Promise<void> {
  switch (end.how) {
    case "returned":
      await reporter.completeAfterRun();
      return;
    case "trap":
      log.info({ trap: end.message }, "component trapped");
      await reporter.failWith(trapOutcome(end.message, { name: end.name, stderr: stderrTail }));
      return;
    case "setup_failed":
      await reporter.failWith(setupFailedOutcome(end.message));
      return;
    case "crashed":
      log.warn({ reason: end.message }, "component thread crashed");
      await reporter.failWith(trapOutcome(end.message, { name: "ThreadCrash", stderr: stderrTail }));
      return;
    case "terminated":
      // Stopped by us: at its deadline (recorded by the timer), because the call ended, or at
      // shutdown (recorded by the worker's stop).
      log.debug({ reason: call.stopped }, "component stopped");
      return;
  }
}
