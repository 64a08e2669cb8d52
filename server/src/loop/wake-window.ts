/**
 * The spec's wake batching: the first pending commit opens a window; when it closes, one wake
 * carries everything committed up to then. Later commits inside the window do not extend it, and
 * nothing here delays a commit or its acknowledgement: the window only delays the Agentloop.
 */
export class WakeWindow {
  private timer: NodeJS.Timeout | null = null;
  private openedAt = 0;

  constructor(
    private readonly windowMs: number,
    private readonly wake: (window: { openedAt: number; firedAt: number } | null) => void,
  ) {}

  /** A wake is queued behind the window. */
  get pending(): boolean {
    return this.timer !== null;
  }

  /** A committed observation. */
  observe(): void {
    if (this.timer) return;
    this.openedAt = Date.now();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.wake({ openedAt: this.openedAt, firedAt: Date.now() });
    }, this.windowMs);
  }

  /** Wake at once (a user message); a queued window wake is folded into this one. */
  now(): void {
    this.cancel();
    this.wake(null);
  }

  /** An interruption invalidates queued wakes. */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
