/**
 * A sub-millisecond wall clock comparable with Postgres's `clock_timestamp()` on the same machine.
 *
 * Postgres stamps records with gettimeofday() (CLOCK_REALTIME, microseconds). Node's Date.now()
 * reads the same clock but truncates to whole milliseconds, and performance.now() is monotonic
 * with a fixed origin taken at process start (performance.timeOrigin), which drifts from the
 * realtime clock as NTP slews it. So: wall = performance.now() + offset, where the offset is
 * re-anchored on the realtime clock before each measurement. Date.now() - performance.now() is
 * floor(real) - real + offset, in (offset - 1 ms, offset]; its maximum over a few thousand
 * readings spread across more than one millisecond approaches the offset from below to within a
 * few microseconds.
 */
let offset = performance.timeOrigin;

/** Re-anchors the clock; spins for about `spinMs`. Returns the anchor's change (drift), in ms. */
export function calibrateWallClock(spinMs = 3): number {
  const end = performance.now() + spinMs;
  let best = Number.NEGATIVE_INFINITY;
  while (performance.now() < end) {
    const d = Date.now() - performance.now();
    if (d > best) best = d;
  }
  const drift = best - offset;
  offset = best;
  return drift;
}

/** Epoch milliseconds with microsecond resolution, on the realtime clock. */
export function wallNow(): number {
  return performance.now() + offset;
}
