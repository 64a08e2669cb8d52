/**
 * Warm spares: threads that have already started, loaded a component's JS and instantiated it,
 * waiting for an invocation. Starting a thread and instantiating a component costs ~70 ms; a call
 * that finds a spare skips it. Each thread still runs exactly one invocation (no state crosses
 * calls); the pool keeps at most one spare per component, for the most recently used components,
 * and lets a spare go after a while unused.
 */
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import type { LoadedComponent } from "./component-cache.js";
import { THREAD_HEAP_LIMITS } from "./sandbox/limits.js";
import type { ThreadInit } from "./sandbox/protocol.js";

export interface SpareThread {
  thread: Worker;
  /** The main thread's end of the bridge. Unstarted until a call is given to the thread. */
  port: MessagePort;
  control: Int32Array;
  /** True once the thread exited (a spare that died idle is not handed out). */
  exited: boolean;
}

/** Components that keep a spare ready. */
const MAX_SPARES = 8;
/** A spare unused for this long is stopped: it holds a component instance's memory. */
const SPARE_IDLE_MS = 5 * 60_000;

export function spawnThread(component: LoadedComponent): SpareThread {
  const { port1, port2 } = new MessageChannel();
  const control = new SharedArrayBuffer(4);
  const init: ThreadInit = { componentUrl: component.componentUrl, modules: component.modules, port: port2, control };
  const thread = new Worker(new URL("./sandbox/thread.js", import.meta.url), {
    workerData: init,
    transferList: [port2],
    // Nothing of the worker's environment (DATABASE_URL, BRAIN_SECRET_KEY) reaches the thread.
    env: {},
    // Its JavaScript heap is bounded; its linear memory is capped in its modules (memory-cap.ts).
    resourceLimits: THREAD_HEAP_LIMITS,
    // The component's JS glue prints to console on some failures: keep it out of our stdout.
    stdout: true,
    stderr: true,
  });
  thread.stdout.resume();
  thread.stderr.resume();
  const spare: SpareThread = { thread, port: port1, control: new Int32Array(control), exited: false };
  thread.once("exit", () => {
    spare.exited = true;
  });
  // An idle spare must not keep the process alive.
  thread.unref();
  return spare;
}

export class SparePool {
  private readonly spares = new Map<string, { spare: SpareThread; idle: NodeJS.Timeout }>();
  private closed = false;

  /** A ready thread for this component: a spare if there is one, else a new thread. */
  take(component: LoadedComponent): SpareThread {
    const entry = this.spares.get(component.sha256);
    if (entry) {
      this.spares.delete(component.sha256);
      clearTimeout(entry.idle);
      if (!entry.spare.exited) return ref(entry.spare);
    }
    return ref(spawnThread(component));
  }

  /** Makes sure a spare is ready for the component's next call. */
  replenish(component: LoadedComponent): void {
    if (this.closed || this.spares.has(component.sha256)) return;
    const spare = spawnThread(component);
    const idle = setTimeout(() => this.drop(component.sha256), SPARE_IDLE_MS);
    idle.unref();
    this.spares.set(component.sha256, { spare, idle });
    spare.thread.once("exit", () => {
      if (this.spares.get(component.sha256)?.spare === spare) this.drop(component.sha256);
    });
    while (this.spares.size > MAX_SPARES) this.drop(this.spares.keys().next().value as string);
  }

  close(): void {
    this.closed = true;
    for (const sha256 of [...this.spares.keys()]) this.drop(sha256);
  }

  private drop(sha256: string): void {
    const entry = this.spares.get(sha256);
    if (!entry) return;
    this.spares.delete(sha256);
    clearTimeout(entry.idle);
    void entry.spare.thread.terminate();
  }
}

/** A thread running a call keeps the process alive, as any work in progress does. */
function ref(spare: SpareThread): SpareThread {
  spare.thread.ref();
  return spare;
}
