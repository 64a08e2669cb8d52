/**
 * Reconnection delays: exponential from `baseMs`, capped at `maxMs`, each drawn from the upper
 * half of its range so that many hosts restarting together spread out but never retry at once.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly baseMs = 250,
    private readonly maxMs = 30_000,
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    const ceiling = Math.min(this.maxMs, this.baseMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 32);
    return ceiling / 2 + (this.random() * ceiling) / 2;
  }

  reset(): void {
    this.attempt = 0;
  }
}
