// armAt, the one long-timer helper: Node's timers overflow past MAX_TIMER_MS (about 24.8 days)
// and fire at once, so a far deadline must be re-armed in steps and fire only when it is due.
import { armAt, MAX_TIMER_MS } from "@aexhq/brain-contracts";
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
