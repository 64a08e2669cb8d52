/** Runs a WebAssembly component tool in a terminable thread (a Brain Environment). */
import { errorOutcome } from "@aexhq/brain-contracts";
import { checkedInput } from "@aexhq/brain-core/schemas";
import { setupFailed as setupFailedOutcome } from "../call-reporter.js";
import { memoryExceeded, trapOutcome } from "../outcomes.js";
import { atMemoryCap } from "../sandbox/limits.js";
import { prepareCall } from "../setup.js";
import { startThread, type ThreadEnd } from "../thread-runner.js";
import type { DriverCall } from "./driver.js";

export async function runComponent({ deps, claimed, placement, reporter, running, log }: DriverCall): Promise<void> {
  const started = Date.now();
  // No SDK stands between a component and Brain: the worker applies the tool's schemas, as the
  // SDK does for a host tool (input with its defaults before `run`, ok results before the journal).
  const input = checkedInput(placement.inputSchema, claimed.input);
  if (!input.ok) {
    if (!running.stopped) await reporter.failWith(input.outcome);
    return;
  }
  reporter.outputSchema = placement.outputSchema;
  const setup = await prepareCall(deps.sql, deps.cache, { ...claimed, input: input.input });
  if (!setup.ok) {
    log.warn({ outcome: setup.outcome }, "component setup failed");
    if (!running.stopped) await reporter.failWith(setup.outcome);
    return;
  }
  const { component, invocation, workspace } = setup.prepared;
  try {
    if (running.stopped) return;
    log.debug({ sha256: component.sha256, transpiled: component.transpiled, setupMs: Date.now() - started }, "running");
    const invoke = { invocation, workspaceDir: workspace?.dir ?? null };
    const thread = startThread(deps.spares.take(component), invoke, reporter, log, deps.limits.cpuMs);
    running.attach(thread);
    // The next call of this component finds a thread ready (it starts on another core while
    // this one runs).
    deps.spares.replenish(component);
    const end = await thread.ended;
    await settle(reporter, running, end, thread.stderrTail, log, deps.limits.memoryBytes);
  } finally {
    await workspace?.remove();
  }
}

/** Journals how `run` ended, unless the call was stopped from outside (then its end is recorded). */
async function settle(
  reporter: DriverCall["reporter"],
  running: DriverCall["running"],
  end: ThreadEnd,
  stderrTail: string[],
  log: DriverCall["log"],
  memoryBytes: number,
): Promise<void> {
  switch (end.how) {
    case "returned":
      await reporter.completeAfterRun();
      return;
    case "trap":
      if (atMemoryCap(end.memoryBytes, memoryBytes)) {
        log.info({ trap: end.message, memoryBytes: end.memoryBytes }, "component ran out of memory");
        await reporter.failWith(memoryExceeded(`its linear memory reached ${memoryBytes} bytes (${end.message})`));
        return;
      }
      log.info({ trap: end.message }, "component trapped");
      await reporter.failWith(trapOutcome(end.message, { name: end.name, stderr: stderrTail }));
      return;
    case "setup_failed":
      await reporter.failWith(setupFailedOutcome(end.message));
      return;
    case "cpu_exceeded":
      log.info({ usedMs: end.usedMs }, "component stopped at its CPU bound");
      await reporter.failWith(
        errorOutcome(
          "cpu_exceeded",
          `The component used ${end.usedMs} ms of CPU, past its bound of ${end.limitMs} ms.`,
          {
            usedMs: end.usedMs,
            limitMs: end.limitMs,
          },
        ),
      );
      return;
    case "memory_exceeded":
      log.info({ reason: end.message }, "component ran out of memory");
      await reporter.failWith(memoryExceeded(end.message));
      return;
    case "crashed":
      log.warn({ reason: end.message }, "component thread crashed");
      await reporter.failWith(trapOutcome(end.message, { name: "ThreadCrash", stderr: stderrTail }));
      return;
    case "terminated":
      // Stopped by us: at its deadline (recorded by the timer), because the call ended, or at
      // shutdown (recorded by the worker's stop).
      log.debug({ reason: running.stopped }, "component stopped");
      return;
  }
}
