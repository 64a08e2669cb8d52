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
