/** What an activation_ended record says, as the waiting request needs it. */
export interface TurnEnd {
  activation: number;
  message: number | null;
  status: "completed" | "cancelled" | "failed";
  text: string;
}

type Listener = (sequence: number, end: TurnEnd) => void;

/**
 * In-process news of ended activations, from the actor that wrote them: a request waiting on its
 * turn in the same process answers without reading the journal back. Requests on other servers
 * learn the same from NOTIFY and a query.
 */
export class TurnNotices {
  private readonly listeners = new Map<string, Set<Listener>>();

  on(sessionId: string, fn: Listener): () => void {
    let set = this.listeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.listeners.set(sessionId, set);
    }
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.listeners.get(sessionId) === set) this.listeners.delete(sessionId);
    };
  }

  emit(sessionId: string, sequence: number, end: TurnEnd): void {
    for (const fn of [...(this.listeners.get(sessionId) ?? [])]) fn(sequence, end);
  }
}
