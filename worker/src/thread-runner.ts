/**
 * Runs one invocation in a worker thread and serves its host calls. A call from the thread is
 * handled by the CallReporter (a journal write); the reply goes back on the port, then the control
 * word flips and wakes the thread (see sandbox/bridge.ts). Calls are served one at a time, in the
 * order the component made them: it is blocked until each is answered.
 */
import { receiveMessageOnPort } from "node:worker_threads";
import type { CallReporter } from "./call-reporter.js";
import type { Logger } from "./log.js";
import { ANSWERED } from "./sandbox/bridge.js";
import { CpuMeter } from "./sandbox/cpu-meter.js";
import type { HostCall, HostReply, Invoke, RunEnd, ThreadMessage } from "./sandbox/protocol.js";
import type { SpareThread } from "./spare-threads.js";

/**
 * How the thread ended: its own report, or stopped by the worker (from outside, or past its CPU
 * bound), or out of memory, or lost without a report.
 */
export type ThreadEnd =
  | RunEnd
  | { how: "terminated" }
  | { how: "cpu_exceeded"; usedMs: number; limitMs: number }
  | { how: "memory_exceeded"; message: string }
  | { how: "crashed"; message: string };

/** Lines of stderr kept for a trap's details: a JS component's exception is printed there. */
const STDERR_TAIL = 20;

export interface RunningThread {
  /** Settles once the thread is gone, with how it ended. */
  readonly ended: Promise<ThreadEnd>;
  /** The last stderr lines the component wrote, for a trap's details. */
  readonly stderrTail: string[];
  /** Stops it wherever it is (a loop, a blocked host call). Idempotent. */
  terminate(): Promise<void>;
}

export function startThread(
  spare: SpareThread,
  invoke: Invoke,
  reporter: CallReporter,
  /** Bound to the call (session, seq): telemetry and output are logged with it. */
  log: Logger,
  /** CPU time the call may use, in ms; 0: no bound. */
  cpuMs: number,
): RunningThread {
  const { thread, port: port1, control: word } = spare;
  const stderrTail: string[] = [];
  const state: RunState = { report: null, terminated: false, overCpu: null, crash: null, outOfMemory: false };
  let chain: Promise<void> = Promise.resolve();
  const meter = new CpuMeter(cpuMs, (usedMs) => {
    state.overCpu = usedMs;
    void thread.terminate();
  });

  const serve = async (call: HostCall): Promise<void> => {
    // Waiting on the journal (or a model) is not the component's CPU.
    meter.waiting(true);
    const reply = await handle(reporter, call);
    meter.waiting(false);
    port1.postMessage(reply);
    Atomics.store(word, 0, ANSWERED);
    Atomics.notify(word, 0);
  };

  const dispatch = (message: ThreadMessage): void => {
    switch (message.type) {
      case "started":
        meter.start(message.tid);
        break;
      case "call":
        chain = chain.then(() => serve(message.call));
        break;
      case "telemetry":
        log[telemetryLevel(message.level)]({ telemetry: message.message }, "component telemetry");
        break;
      case "output":
        noteOutput(stderrTail, log, message);
        break;
      case "end":
        state.report = message.end;
        break;
    }
  };
  port1.on("message", dispatch);
  thread.postMessage(invoke);

  thread.on("error", (error) => {
    state.crash = error.message;
    state.outOfMemory ||= (error as NodeJS.ErrnoException).code === "ERR_WORKER_OUT_OF_MEMORY";
  });
  const ended = new Promise<ThreadEnd>((resolve) => {
    const onExit = () => {
      // Messages the thread sent just before it exited may not have been dispatched yet.
      for (let left = receiveMessageOnPort(port1); left; left = receiveMessageOnPort(port1)) {
        dispatch(left.message as ThreadMessage);
      }
      port1.close();
      meter.stop();
      // Host calls already in flight finish their writes before the end is reported: the
      // caller's follow-up writes must come after them.
      void chain.then(() => resolve(howItEnded(state, cpuMs)));
    };
    // A spare can die while idle (out of memory, say) just before it is handed a call.
    if (spare.exited) onExit();
    else thread.once("exit", onExit);
  });

  return {
    ended,
    stderrTail,
    async terminate() {
      if (!state.terminated && state.report === null) state.terminated = true;
      await thread.terminate();
    },
  };
}

/** A line the component wrote: logged, and stderr's last lines kept for a trap's details. */
function noteOutput(stderrTail: string[], log: Logger, message: Extract<ThreadMessage, { type: "output" }>): void {
  if (message.stream === "stderr") {
    stderrTail.push(message.text);
    if (stderrTail.length > STDERR_TAIL) stderrTail.shift();
  }
  log.debug({ stream: message.stream, line: message.text }, "component output");
}

/** What a thread's run left behind, read once it exited. */
interface RunState {
  report: RunEnd | null;
  terminated: boolean;
  overCpu: number | null;
  crash: string | null;
  outOfMemory: boolean;
}

function howItEnded(s: RunState, cpuMs: number): ThreadEnd {
  if (s.terminated) return { how: "terminated" };
  if (s.overCpu !== null) return { how: "cpu_exceeded", usedMs: s.overCpu, limitMs: cpuMs };
  if (s.report) return s.report;
  if (s.outOfMemory) return { how: "memory_exceeded", message: s.crash ?? "out of memory" };
  return { how: "crashed", message: s.crash ?? "the component's thread exited without a report" };
}

/** The component's level, if it is one an operator filters on; anything else is info. */
function telemetryLevel(level: string): "trace" | "debug" | "info" | "warn" | "error" {
  return level === "trace" || level === "debug" || level === "warn" || level === "error" ? level : "info";
}

async function handle(reporter: CallReporter, call: HostCall): Promise<HostReply> {
  switch (call.op) {
    case "emit":
      return reporter.emit(call.kind, call.data);
    case "emit-result":
      return reporter.emitResult(call.outcome);
    case "returned":
      return reporter.returned();
    case "finish":
      return reporter.finish(call.outcome);
    case "model":
      return reporter.model(call.request);
  }
}
