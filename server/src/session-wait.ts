import type { BrainError } from "@aexhq/brain-contracts";
import type { Services } from "./services.js";

/** One wait for something the journal of a session will say (a turn's end, a call's answer). */
export interface SessionWait<T> {
  sessionId: string;
  /** The commit bits (`Touch`) after which the journal is looked at again. */
  wakeOn: number;
  /** Looks at the journal: a value ends the wait, undefined waits on; a throw ends it with the error. */
  look: () => Promise<T | undefined>;
  /**
   * Look one microtask after a wake: a notice from this process's own commit (through `also`)
   * comes first, and then no query is needed.
   */
  deferLook?: boolean;
  /** Look once at the start; false when nothing can have happened yet (the caller just wrote). */
  lookFirst: boolean;
  /** The error the wait ends with when the server shuts down (the work itself goes on). */
  shutdown: () => BrainError;
  /** Other ways for it to end, subscribed with the wait; returns their unsubscribe. */
  also?: (settle: (value: T) => void, fail: (error: unknown) => void) => () => void;
}

/**
 * Waits on a session's journal without missing a commit and without polling: it subscribes to
 * the session's commits (in this process, or from others through LISTEN/NOTIFY) before it looks,
 * so whatever commits in between wakes a look; looks never overlap, and a wake during a look makes
 * it look once more. The one home of that rule for every request that waits on a journal.
 */
export function waitOnSession<T>(rt: Pick<Services, "bus" | "closing">, w: SessionWait<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    let looking = false;
    let again = false;
    const end = (outcome: { value: T } | { error: unknown }) => {
      if (done) return;
      done = true;
      offBus();
      offAlso();
      rt.closing.removeEventListener("abort", onShutdown);
      if ("value" in outcome) resolve(outcome.value);
      else reject(outcome.error);
    };
    const settle = (value: T) => end({ value });
    const fail = (error: unknown) => end({ error });
    const look = async () => {
      if (looking) {
        again = true;
        return;
      }
      looking = true;
      try {
        do {
          again = false;
          const value = await w.look();
          if (value !== undefined) return settle(value);
        } while (again && !done);
      } catch (error) {
        fail(error);
      } finally {
        looking = false;
      }
    };
    const offBus = rt.bus.onSession(w.sessionId, (bits) => {
      if (!(bits & w.wakeOn)) return;
      if (!w.deferLook) return void look();
      queueMicrotask(() => {
        if (!done) void look();
      });
    });
    const onShutdown = () => fail(w.shutdown());
    let offAlso: () => void = () => {};
    offAlso = w.also?.(settle, fail) ?? offAlso;
    if (done) return offAlso();
    rt.closing.addEventListener("abort", onShutdown, { once: true });
    if (rt.closing.aborted) return onShutdown();
    if (w.lookFirst) void look();
  });
}
