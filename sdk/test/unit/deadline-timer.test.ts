import { MAX_TIMER_MS } from "@aexhq/brain-contracts";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { armDeadline } from "../../src/deadline-timer.js";

const DAY = 24 * 60 * 60 * 1000;

describe("armDeadline", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date("2030-01-01T00:00:00Z") });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fires a deadline beyond 2^31-1 ms at the deadline, not early (re-armed in steps)", () => {
    const deadline = Date.now() + 60 * DAY;
    let fired = 0;
    armDeadline(deadline, () => fired++);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(MAX_TIMER_MS + 1000);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(deadline - Date.now() - 1);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);
    vi.advanceTimersByTime(100 * DAY);
    expect(fired).toBe(1);
  });

  it("fires a short deadline once, on time", () => {
    let fired = 0;
    armDeadline(Date.now() + 500, () => fired++);
    vi.advanceTimersByTime(499);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);
  });

  it("fires at once for a deadline already past", () => {
    let fired = 0;
    armDeadline(Date.now() - 1, () => fired++);
    expect(fired).toBe(1);
  });

  it("never fires once disarmed, even across re-arming steps", () => {
    let fired = 0;
    const disarm = armDeadline(Date.now() + 40 * DAY, () => fired++);
    vi.advanceTimersByTime(MAX_TIMER_MS + 5);
    disarm();
    vi.advanceTimersByTime(50 * DAY);
    expect(fired).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
