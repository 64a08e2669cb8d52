/**
 * Work a server does on behalf of an open call (ctx.environments.call, setup) stops when the call
 * stops: at its deadline, when it ends (finished, cancelled, its connection lost: any commit that
 * ends it, from any process, reaches the bus) and when the server shuts down.
 */
import { armAt } from "@aexhq/brain-contracts";
import { Touch } from "@aexhq/brain-db/commits";
import { callState } from "@aexhq/brain-db/ops";
import type { Services } from "../services.js";
import type { HostCall } from "./journal.js";

export interface CallSignal {
  signal: AbortSignal;
  dispose(): void;
}

export function callSignal(
  rt: Pick<Services, "bus" | "closing" | "sql">,
  call: HostCall,
  deadline: number | null,
): CallSignal {
  const controller = new AbortController();
  const stop = (why: string) => {
    if (!controller.signal.aborted) controller.abort(new Error(why));
  };
  // armAt re-arms a far deadline in steps; unref: a pending deadline alone keeps nothing alive.
  const disarm =
    deadline === null ? () => {} : armAt(deadline, () => stop("the call reached its deadline"), { unref: true });
  const onClosing = () => stop("the server is shutting down");
  rt.closing.addEventListener("abort", onClosing, { once: true });
  if (rt.closing.aborted) onClosing();
  const unsubscribe = rt.bus.onSession(call.sessionId, (bits) => {
    if ((bits & (Touch.observation | Touch.ended)) === 0 || controller.signal.aborted) return;
    callState(rt.sql, call.sessionId, call.seq, call.hostId)
      .then((state) => {
        if (state !== "running" && state !== "returned") stop("the call ended");
      })
      .catch(() => {});
  });
  return {
    signal: controller.signal,
    dispose() {
      disarm();
      rt.closing.removeEventListener("abort", onClosing);
      unsubscribe();
    },
  };
}
