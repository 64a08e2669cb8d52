import { MAX_TIMER_MS } from "./limits.js";

/**
 * Calls `fire` at the epoch-ms instant `at`. Node's timers overflow past 2^31-1 ms (about 24.8
 * days) and would fire at once, so a far deadline is re-armed in steps. Returns the disarm.
 */
export function armAt(at: number, fire: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = at - Date.now();
    if (left <= 0) {
      fire();
      return;
    }
    timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
  };
  arm();
  return () => clearTimeout(timer);
}
