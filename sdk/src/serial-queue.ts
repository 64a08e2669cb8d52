const noop = (): void => {};

/**
 * Runs steps one after another in the order they were added, whatever each step awaits.
 * A failing step rejects only its own promise; the queue goes on.
 */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();

  add<T>(step: () => Promise<T> | T): Promise<T> {
    const result = this.tail.then(step);
    this.tail = result.then(noop, noop);
    return result;
  }
}
