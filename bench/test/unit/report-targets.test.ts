import { describe, expect, it } from "vitest";
import { ratios, targets } from "../../src/report.js";
import { latency, rate, value } from "../../src/stats.js";

// The scaling and baseline rows of issue 14's targets table, from figures made up here: no
// processes, no database, milliseconds.
describe("the targets table", () => {
  const figures = [
    rate("tool_throughput", "calls/s", 6_000, 3),
    rate("pgboss_roundtrip.throughput", "calls/s", 1_200, 3),
    rate("graphile_roundtrip.throughput", "calls/s", 300, 3),
    latency("turn_one_tool.call_roundtrip", [2, 2, 2]),
    latency("graphile_roundtrip", [4, 4, 4]),
    rate("tool_scaling.sessions_1", "calls/s", 300, 3),
    rate("tool_scaling.sessions_512", "calls/s", 2_400, 3),
    latency("journal_size.records_10", [5, 5, 5]),
    latency("journal_size.records_1000", [5.5, 5.5, 5.5]),
    latency("journal_size.records_10000", [6.5, 6.5, 6.5]),
    value("session_memory.rss", "KiB/session", 200, 9.123),
    value("session_memory.heap", "KiB/session", 200, 4.6),
  ];
  const list = ratios(figures);
  const table = new Map(targets(list, figures).map((t) => [t.target, t]));

  it("holds tool_throughput against both queue baselines", () => {
    expect(table.get("tool_throughput ≥ 5 × pgboss_roundtrip.throughput")).toMatchObject({
      measured: "5 ×",
      met: true,
    });
    expect(table.get("tool_throughput ≥ 5 × graphile_roundtrip.throughput")).toMatchObject({
      measured: "20 ×",
      met: true,
    });
    expect(table.get("call round trip ≤ ¼ of graphile_roundtrip")).toMatchObject({ measured: "0.5 ×", met: false });
  });

  it("reports how throughput grows and whether a turn is flat in journal size", () => {
    expect(list.find((r) => r.name === "tool_scaling 512 ÷ 1 sessions")?.value).toBe(8);
    expect(table.get("text turn p50 flat in journal size (largest ÷ smallest ≤ 1.2)")).toMatchObject({
      measured: "1.3 ×",
      met: false,
    });
  });

  it("checks server memory per idle session against 8 KiB", () => {
    expect(table.get("server memory per idle session (VmRSS) ≤ 8 KiB")).toMatchObject({
      measured: "9.12 KiB",
      met: false,
    });
    expect(table.get("server memory per idle session (V8 heap) ≤ 8 KiB")).toMatchObject({
      measured: "4.6 KiB",
      met: true,
    });
  });
});
