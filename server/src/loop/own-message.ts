import { type CommitKeys, Touch } from "@aexhq/brain-db/commits";
import type { WriteOp } from "@aexhq/brain-db/writer";

/**
 * A user message the session's own actor appends (the fast path, with the activation it starts)
 * is announced as one of the loop's records rather than as a message: the actor that wrote it is
 * already handling it, so waking it would only make it read the journal again for nothing, and
 * other servers, which see that this one runs the session, have nothing to claim. Everyone else
 * listening for the session (event streams, waiting requests) still hears of the commit.
 */
export function announcedAsLoop<R>(sessionId: string, op: WriteOp<R>): WriteOp<R> {
  const relabel = (keys: CommitKeys): CommitKeys => {
    const bits = keys.sessions.get(sessionId);
    if (bits === undefined || !(bits & Touch.message)) return keys;
    const sessions = new Map(keys.sessions);
    sessions.set(sessionId, (bits & ~Touch.message) | Touch.loop);
    return { ...keys, sessions };
  };
  return {
    ...op,
    ...(op.notify ? { notify: relabel(op.notify) } : {}),
    keys: (result) => relabel(op.keys(result)),
  };
}
