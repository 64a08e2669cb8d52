import { describe, expect, it } from "vitest";
import { type Figure, latency, rate } from "../../src/measure/stats.js";
import { ratios } from "../../src/report/ratios.js";
import { targets } from "../../src/report/targets.js";
import { median, medianRatios, medianRound } from "../../src/runner/rounds.js";

// `--rounds N`, from figures made up here: each ratio is the median of the rounds, each
// scenario's table the round in the middle.
function round(brain: number, boss: number): Figure[] {
  return [
    rate("tool_throughput", "calls/s", brain * 10, 10),
    rate("pgboss_roundtrip.throughput", "calls/s", boss * 10, 10),
  ];
}

describe("rounds", () => {
  it("takes each ratio from the median of its rounds, not from one run's two sides", () => {
    // The machine slowed between Brain's and pg-boss's runs in round 2: its ratio is the outlier.
    const perRound = [round(2_000, 500), round(1_000, 500), round(2_100, 520)].map((r) => ratios(r));
    const merged = medianRatios(perRound);
    const boss = merged.find((r) => r.name === "tool_throughput ÷ pg-boss")!;
    expect(boss.value).toBe(4);
    expect(boss.how).toContain("median of 3 rounds (4, 2, 4.04)");
    const target = targets(merged).find((t) => t.target === "tool_throughput ≥ 5 × pgboss_roundtrip.throughput");
    expect(target).toMatchObject({ measured: "4 ×", met: false });
  });

  it("keeps a ratio measured in only some rounds, and one round as it is", () => {
    const merged = medianRatios([[{ name: "a", value: 1, how: "x" }], [{ name: "b", value: 3, how: "y" }]]);
    expect(merged.map((r) => [r.name, r.value, r.how])).toEqual([
      ["a", 1, "x; from 1 of 2 rounds"],
      ["b", 3, "y; from 1 of 2 rounds"],
    ]);
    const one = [{ name: "a", value: 1.5, how: "x" }];
    expect(medianRatios([one])).toBe(one);
  });

  it("shows the round whose headline figure is the median, whole", () => {
    const rounds = [
      [latency("emit", [3, 3, 3]), latency("emit.other", [30])],
      [latency("emit", [1, 1, 1]), latency("emit.other", [10])],
      [latency("emit", [2, 2, 2]), latency("emit.other", [20])],
    ];
    const shown = medianRound(rounds);
    expect(shown.map((f) => (f.kind === "latency" ? f.p50 : null))).toEqual([2, 20]);
  });

  it("takes the mean of the two middle values for an even count", () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5, 1, 9])).toBe(5);
  });
});
