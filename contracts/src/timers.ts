import { MAX_TIMER_MS } from "./limits.js";

/**
 * Calls `fire` once, when the wall clock reaches `at` (epoch ms). Node's timers overflow past
 * MAX_TIMER_MS (about 24.8 days) and would fire almost at once, so a far deadline is re-armed in
 * steps. With `unref`, a pending deadline alone does not keep the process alive (an SDK's socket
 * does). Returns the disarm.
 */
export function armAt(at: number, fire: () => void, options: { unref?: boolean } = {}): () => void {
  let timer: NodeJS.Timeout | undefined;
  let disarmed = false;
  const check = (): void => {
    if (disarmed) return;
    const left = at - Date.now();
    if (left <= 0) {
      disarmed = true;
      fire();
      return;
    }
    timer = setTimeout(check, Math.min(left, MAX_TIMER_MS));
    if (options.unref) timer.unref();
  };
  check();
  return () => {
    disarmed = true;
    if (timer !== undefined) clearTimeout(timer);
  };
}

/** A task run on a period that never overlaps itself (see periodic). */
export interface Periodic {
  /** Runs the task now, or answers the run in progress; nothing once stopped. */
  run(): Promise<void>;
  /** Stops the period and waits for a run in progress to finish. */
  stop(): Promise<void>;
}

/**
 * Runs `task` every `periodMs`, never two runs at once: a tick that finds the last run still
 * going is skipped, not queued. A run's failure goes to `onError` and the period goes on. The
 * first run is at `firstAfterMs` when given, else at the first tick (or whenever `run` is called).
 * Its timers keep the process alive only with `keepsAlive` (a heartbeat is what a process is for).
 */
export function periodic(
  task: () => Promise<void>,
  periodMs: number,
  options: { onError: (err: unknown) => void; firstAfterMs?: number; keepsAlive?: boolean },
): Periodic {
  let current: Promise<void> | null = null;
  let stopped = false;
  const run = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    current ??= task()
      .catch(options.onError)
      .finally(() => {
        current = null;
      });
    return current;
  };
  const timer = setInterval(() => void run(), periodMs);
  if (!options.keepsAlive) timer.unref();
  const first = options.firstAfterMs === undefined ? undefined : setTimeout(() => void run(), options.firstAfterMs);
  first?.unref();
  return {
    run,
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(first);
      await current;
    },
  };
}
