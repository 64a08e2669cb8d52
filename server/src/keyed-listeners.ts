/** Listeners grouped by a key (a session id): subscribe returns its own unsubscribe. */
export class KeyedListeners<Args extends unknown[]> {
  private readonly byKey = new Map<string, Set<(...args: Args) => void>>();

  on(key: string, fn: (...args: Args) => void): () => void {
    let set = this.byKey.get(key);
    if (!set) {
      set = new Set();
      this.byKey.set(key, set);
    }
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.byKey.get(key) === set) this.byKey.delete(key);
    };
  }

  /** Calls every listener of `key`; one that unsubscribes while being called is fine. */
  emit(key: string, ...args: Args): void {
    const set = this.byKey.get(key);
    if (set) for (const fn of [...set]) fn(...args);
  }

  /** Every key that has listeners now. */
  keys(): string[] {
    return [...this.byKey.keys()];
  }
}
