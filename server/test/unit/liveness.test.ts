import { SERVER_STALE_SECONDS } from "@aexhq/brain-db/ops";
import { describe, expect, it } from "vitest";
import { JUDGE_AFTER_MS, Liveness } from "../../src/liveness.js";

// The verdicts a server may draw from heartbeats: pure bookkeeping over its own beats, outages
// and how long the database has answered (given here, as DatabaseAvailability would).

function liveness() {
  const clock = { upFor: 0 };
  return { clock, l: new Liveness(() => clock.upFor, 1000) };
}

describe("liveness", () => {
  it("a server started fresh presumes nobody live, and judges once up for a stale window", () => {
    const { clock, l } = liveness();
    l.beat(new Date("2026-01-01T00:00:00Z"));
    expect(l.presumedLiveSince()).toBeNull();
    expect(l.mayDeclareDead()).toBe(false);
    clock.upFor = JUDGE_AFTER_MS + 1;
    expect(l.mayDeclareDead()).toBe(true);
  });

  it("back from an outage, presumes live whoever beat within a stale window of its last beat before it", () => {
    const { clock, l } = liveness();
    clock.upFor = 60_000;
    l.beat(new Date("2026-01-01T00:00:00Z"));
    l.beat(new Date("2026-01-01T00:00:01Z"));
    l.away();
    clock.upFor = 0;
    expect(l.mayDeclareDead()).toBe(false);
    const since = new Date(Date.parse("2026-01-01T00:00:01Z") - SERVER_STALE_SECONDS * 1000);
    expect(l.presumedLiveSince()).toEqual(since);
    // Beats after the outage do not move the mark: the others are measured against before it.
    l.beat(new Date("2026-01-01T00:00:09Z"));
    clock.upFor = 2_000;
    expect(l.presumedLiveSince()).toEqual(since);
    clock.upFor = JUDGE_AFTER_MS + 1;
    expect(l.presumedLiveSince()).toBeNull();
    expect(l.mayDeclareDead()).toBe(true);
  });

  it("an outage again before the others were given their window keeps the first outage's mark", () => {
    const { clock, l } = liveness();
    clock.upFor = 60_000;
    l.beat(new Date("2026-01-01T00:00:01Z"));
    l.away();
    clock.upFor = 500;
    // Back, and beating, when a stale pooled connection fails: another outage, 1 s in.
    l.beat(new Date("2026-01-01T00:00:07Z"));
    l.away();
    clock.upFor = 0;
    const since = new Date(Date.parse("2026-01-01T00:00:01Z") - SERVER_STALE_SECONDS * 1000);
    expect(l.presumedLiveSince()).toEqual(since);
    // Once the window has passed without a break, beats count again.
    clock.upFor = JUDGE_AFTER_MS + 1;
    l.beat(new Date("2026-01-01T00:00:20Z"));
    l.away();
    clock.upFor = 0;
    expect(l.presumedLiveSince()).toEqual(new Date(Date.parse("2026-01-01T00:00:20Z") - SERVER_STALE_SECONDS * 1000));
  });

  it("judges as of its last beat plus a beat interval, whether or not it moved the mark", () => {
    const { clock, l } = liveness();
    expect(l.judgement()).toEqual({ judgedAt: null, presumedLiveSince: null });
    clock.upFor = 60_000;
    l.beat(new Date("2026-01-01T00:00:01Z"));
    expect(l.judgement()).toEqual({ judgedAt: new Date("2026-01-01T00:00:02Z"), presumedLiveSince: null });
    l.away();
    clock.upFor = 100;
    l.beat(new Date("2026-01-01T00:00:09Z"));
    expect(l.judgement()).toEqual({
      judgedAt: new Date("2026-01-01T00:00:10Z"),
      presumedLiveSince: new Date(Date.parse("2026-01-01T00:00:01Z") - SERVER_STALE_SECONDS * 1000),
    });
  });

  it("an outage before the first beat leaves nothing to measure against", () => {
    const { l } = liveness();
    l.away();
    expect(l.presumedLiveSince()).toBeNull();
  });
});
