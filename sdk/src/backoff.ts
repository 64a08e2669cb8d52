/**
 * Reconnection delays with full jitter: attempt n waits a uniform random time in
 * [0, min(maxMs, baseMs · 2^n)). The first retries are fast (a blip costs ~100 ms), the cap keeps
 * a host that waited through a long outage within `maxMs` of its server's return, and drawing
 * from the whole range spreads many hosts restarting together over that window.
 */
export const BACKOFF_BASE_MS = 100;
export const BACKOFF_MAX_MS = 3_000;

export class Backoff {
  private attempt = 0;

  constructor(
    private readonly baseMs = BACKOFF_BASE_MS,
    private readonly maxMs = BACKOFF_MAX_MS,
    private readonly random: () => number = Math.random,
  ) {}

  /** The ceiling of the next delay, before jitter. */
  get ceiling(): number {
    return Math.min(this.maxMs, this.baseMs * 2 ** this.attempt);
  }

  next(): number {
    const ceiling = this.ceiling;
    this.attempt = Math.min(this.attempt + 1, 32);
    return this.random() * ceiling;
  }

  reset(): void {
    this.attempt = 0;
  }
}
