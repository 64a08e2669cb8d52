// armAt, the one long-timer helper: Node's timers overflow past MAX_TIMER_MS (about 24.8 days)
// and fire at once, so a far deadline must be re-armed in steps and fire only when it is due.
import { armAt, MAX_TIMER_MS, periodic } from "@aexhq/brain-contracts";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("armAt", () => {
  it("fires once, when the wall clock reaches a deadline months away", () => {
    const fire = vi.fn();
    const at = 3 * MAX_TIMER_MS + 1_234;
    armAt(at, fire);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1_233);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fire).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10 * MAX_TIMER_MS);
    expect(fire).toHaveBeenCalledTimes(1);
  });

  it("fires at once for a deadline already past, and never after disarm", () => {
    const past = vi.fn();
    armAt(-1, past);
    expect(past).toHaveBeenCalledTimes(1);
    const disarmed = vi.fn();
    const disarm = armAt(2 * MAX_TIMER_MS, disarmed);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    disarm();
    vi.advanceTimersByTime(2 * MAX_TIMER_MS);
    expect(disarmed).not.toHaveBeenCalled();
  });
});

describe("periodic", () => {
  it("never runs a task twice at once: a tick that finds it running is skipped, not queued", async () => {
    let release = () => {};
    let runs = 0;
    const task = () => {
      runs++;
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    };
    const p = periodic(task, 100, { onError: () => {} });
    await vi.advanceTimersByTimeAsync(100);
    await vi.advanceTimersByTimeAsync(500);
    expect(runs).toBe(1);
    release();
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(2);
    release();
    await p.stop();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(2);
  });

  it("hands a failure to onError and goes on; stop waits for the run in progress", async () => {
    const errors: unknown[] = [];
    let runs = 0;
    let finished = false;
    const p = periodic(
      async () => {
        runs++;
        if (runs === 1) throw new Error("first");
        await new Promise((r) => setTimeout(r, 50));
        finished = true;
      },
      100,
      { onError: (err) => errors.push(err), firstAfterMs: 10 },
    );
    await vi.advanceTimersByTimeAsync(10);
    expect(errors.map((e) => (e as Error).message)).toEqual(["first"]);
    const second = p.run();
    const stopped = p.stop();
    await vi.advanceTimersByTimeAsync(50);
    await stopped;
    await second;
    expect(finished).toBe(true);
    expect(runs).toBe(2);
  });
});
