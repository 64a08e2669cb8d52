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
    this.arm(this.windowMs);
  }

  /**
   * Node starts a timer from the event loop's cached clock, which may be a few milliseconds behind
   * when the window opened in a busy turn of the loop: a timer that fires early is armed again for
   * what is left, so no window is shorter than its width.
   */
  private arm(ms: number): void {
    this.timer = setTimeout(() => {
      const firedAt = Date.now();
      const left = this.openedAt + this.windowMs - firedAt;
      if (left > 0) return this.arm(left);
      this.timer = null;
      this.wake({ openedAt: this.openedAt, firedAt });
    }, ms);
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
