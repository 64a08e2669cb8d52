import { armAt } from "./contracts.js";

/**
 * Calls `onExpire` once, at `deadline` (epoch ms), re-armed in steps past Node's timer limit.
 * The host's socket keeps the process alive; a pending deadline alone does not. Returns the disarm.
 */
export function armDeadline(deadline: number, onExpire: () => void): () => void {
  return armAt(deadline, onExpire, { unref: true });
}
