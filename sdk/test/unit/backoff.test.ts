// The host connection's (and send's) reconnection delays: full jitter under a cap of a few
// seconds, fast first retries, and many hosts spread evenly over the window.
import { describe, expect, it } from "vitest";
import { seeded } from "../../../testkit/random.js";
import { BACKOFF_BASE_MS, BACKOFF_MAX_MS, Backoff } from "../../src/backoff.js";

describe("Backoff", () => {
  it("doubles its ceiling from 100 ms up to the 3 s cap and stays there; reset starts over", () => {
    expect([BACKOFF_BASE_MS, BACKOFF_MAX_MS]).toEqual([100, 3_000]);
    const top = new Backoff(undefined, undefined, () => 1);
    const ceilings = Array.from({ length: 40 }, () => top.next());
    expect(ceilings.slice(0, 7)).toEqual([100, 200, 400, 800, 1600, 3000, 3000]);
    expect(Math.max(...ceilings)).toBe(3000);
    top.reset();
    expect(top.next()).toBe(100);
  });

  it("draws from the whole range, down to zero (full jitter)", () => {
    const draws = [0.5, 0.5, 0.5, 0.5, 0.5, 0, 0.25, 0.5, 0.999];
    let i = 0;
    const b = new Backoff(100, 3_000, () => draws[i++]!);
    expect(Array.from({ length: 5 }, () => b.next())).toEqual([50, 100, 200, 400, 800]);
    // At the cap: each delay is the draw times 3 s.
    expect([b.next(), b.next(), b.next(), b.next()]).toEqual([0, 750, 1500, 2997]);
  });

  it("spreads many hosts evenly over [0, 3 s) once they reach the cap, and never beyond it", () => {
    const random = seeded(42);
    const hosts = 5_000;
    const delays: number[] = [];
    for (let h = 0; h < hosts; h++) {
      const b = new Backoff(BACKOFF_BASE_MS, BACKOFF_MAX_MS, random);
      // An outage long enough to reach the cap: the sixth attempt onwards.
      for (let n = 0; n < 8; n++) {
        const d = b.next();
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThan(BACKOFF_MAX_MS);
      }
      delays.push(b.next());
    }
    const buckets = Array(10).fill(0) as number[];
    for (const d of delays) buckets[Math.floor((d / BACKOFF_MAX_MS) * 10)]!++;
    // Uniform: each tenth of the window gets ~10% of the hosts (no herd at either end).
    for (const n of buckets) expect(n / hosts).toBeGreaterThan(0.08);
    for (const n of buckets) expect(n / hosts).toBeLessThan(0.12);
    const mean = delays.reduce((s, d) => s + d, 0) / hosts;
    expect(Math.abs(mean - BACKOFF_MAX_MS / 2)).toBeLessThan(100);
  });
});
