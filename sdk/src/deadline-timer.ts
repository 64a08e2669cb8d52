import { MAX_TIMER_MS } from "@aexhq/brain-contracts";

/**
 * Calls `onExpire` once, when the wall clock reaches `deadline` (epoch ms). Node timers
 * overflow past MAX_TIMER_MS (~24.8 days) and would fire almost at once, so a long deadline
 * is reached by re-arming in steps of at most MAX_TIMER_MS. Returns a function that disarms it.
 */
export function armDeadline(deadline: number, onExpire: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  let disarmed = false;
  const check = (): void => {
    if (disarmed) return;
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      disarmed = true;
      onExpire();
      return;
    }
    timer = setTimeout(check, Math.min(remaining, MAX_TIMER_MS));
    // The host's socket keeps the process alive; a pending deadline alone should not.
    timer.unref();
  };
  check();
  return () => {
    disarmed = true;
    if (timer !== undefined) clearTimeout(timer);
  };
}
