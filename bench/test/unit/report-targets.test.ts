import { describe, expect, it } from "vitest";
import { latency, rate, value } from "../../src/measure/stats.js";
import { ratios } from "../../src/report/ratios.js";
import { targets } from "../../src/report/targets.js";

// The scaling and baseline rows of issue 14's targets table, from figures made up here: no
// processes, no database, milliseconds.
describe("the targets table", () => {
  const figures = [
    rate("tool_throughput", "calls/s", 6_000, 3),
    rate("pgboss_roundtrip.throughput", "calls/s", 1_200, 3),
    rate("graphile_roundtrip.throughput", "calls/s", 300, 3),
    latency("turn_one_tool.call_roundtrip", [2, 2, 2]),
    latency("graphile_roundtrip", [4, 4, 4]),
    rate("dbos_roundtrip.throughput", "calls/s", 2_000, 3),
    rate("floor_stack.throughput", "calls/s", 10_000, 3),
    latency("journal_volume.turn_empty", [2, 2, 2]),
    latency("journal_volume.turn_loaded", [2.1, 2.1, 2.1]),
    // The machine slowed between the empty turns before the load and after it: the loaded ones are
    // held to the mean of the two.
    latency("journal_volume.turn_after", [2.2, 2.2, 2.2]),
    latency("journal_volume.appends_during_drop", [0.5, 0.6, 1_250]),
    value("journal_steady.journal_first", "MiB", 1, 400),
    value("journal_steady.journal_max", "MiB", 6, 420),
    latency("floor_stack.turn_text", [2, 2, 2]),
    latency("turn_text", [2.5, 2.5, 2.5]),
    latency("floor_stack.call_roundtrip", [0.8, 0.8, 0.8]),
    latency("dbos_roundtrip", [1, 1, 1]),
    rate("tool_scaling.sessions_1", "calls/s", 300, 3),
    rate("tool_scaling.sessions_512", "calls/s", 2_400, 3),
    latency("journal_size.records_10", [5, 5, 5]),
    latency("journal_size.records_1000", [5.5, 5.5, 5.5]),
    latency("journal_size.records_10000", [6.5, 6.5, 6.5]),
    value("session_memory.rss", "KiB/session", 200, 9.123),
    value("session_memory.heap", "KiB/session", 200, 4.6),
    value("session_memory.first_rss", "KiB/session", 100, 14.04),
    value("parked_memory.parked_heap", "KiB/session", 500, 0.456),
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

  it("holds throughput and the call round trip against DBOS Transact", () => {
    expect(table.get("tool_throughput ≥ 1 × dbos_roundtrip.throughput")).toMatchObject({ measured: "3 ×", met: true });
    expect(table.get("call round trip ≤ 1 × dbos_roundtrip")).toMatchObject({ measured: "2 ×", met: false });
  });

  it("holds Brain to the bare stack of the same run", () => {
    expect(table.get("tool_throughput ≥ 0.5 × floor_stack.throughput")).toMatchObject({ measured: "0.6 ×", met: true });
    expect(table.get("turn_text p50 ≤ 1.5 × floor_stack.turn_text")).toMatchObject({ measured: "1.25 ×", met: true });
    expect(table.get("call round trip ≤ 2 × floor_stack.call_roundtrip")).toMatchObject({
      measured: "2.5 ×",
      met: false,
    });
    expect(table.get("emit p50 ≤ 1.5 × floor_stack.emit")).toMatchObject({ measured: "not measured", met: null });
  });

  it("judges a turn beside millions of records, and the stall a dropped week causes", () => {
    expect(table.get("text turn p50 flat beside millions of records (loaded ÷ empty ≤ 1.2)")).toMatchObject({
      measured: "1 ×",
      met: true,
    });
    expect(
      table.get("journal size flat under a steady load with retention (largest ÷ window full ≤ 1.1)"),
    ).toMatchObject({ measured: "1.05 ×", met: true });
    expect(table.get("a write waits < 1 s while retention drops a week (longest append)")).toMatchObject({
      measured: "1250 ms",
      met: false,
    });
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
    expect(
      table.get("server memory per idle session, a fresh server's first ones with its one-off growth (VmRSS) ≤ 8 KiB"),
    ).toMatchObject({
      measured: "14.04 KiB",
      met: false,
    });
  });

  it("checks server memory per parked session against 8 KiB", () => {
    expect(table.get("server memory per parked session with history (V8 heap) ≤ 8 KiB")).toMatchObject({
      measured: "0.46 KiB",
      met: true,
    });
  });
});

// The bare stack's column: the same targets on floor_stack's figures, under Brain's formulas.
describe("the targets table against the bare stack", () => {
  const figures = [
    latency("floor_commit", [0.5, 0.5, 0.5]),
    latency("floor_notify.commit_to_listener", [0.5, 0.5, 0.5]),
    rate("pgboss_roundtrip.throughput", "calls/s", 2_100, 3),
    latency("turn_text", [6, 6, 6]),
    value("turn_text.commits", "commits/turn", 3, 2),
    latency("emit", [2, 2, 2]),
    latency("tool_dispatch.to_host_socket", [2, 2, 2]),
    rate("tool_throughput", "calls/s", 3_000, 3, { cpu: { server: 0.9, host: 0.3, postgres: 0.3 } }),
    latency("floor_stack.turn_text", [3, 3, 3]),
    latency("floor_stack.emit", [0.7, 0.7, 0.7]),
    latency("floor_stack.dispatch", [1, 1, 1]),
    rate("floor_stack.throughput", "calls/s", 12_000, 3, { cpu: { server: 0.5, host: 0.4, postgres: 0.3 } }),
    latency("pgboss_roundtrip", [10, 10, 10]),
    latency("turn_one_tool.call_roundtrip", [3, 3, 3]),
    latency("floor_stack.call_roundtrip", [2, 2, 2]),
  ];
  const list = ratios(figures);
  const table = new Map(targets(list, figures).map((t) => [t.target, t]));

  it("evaluates each target on the bare stack too", () => {
    // 3 ms ÷ (2 × 0.5 ms): the bare stack misses the text-turn target, so Brain's miss is the stack's.
    expect(table.get("turn_text p50 ≤ 2 × (commits × floor_commit)")).toMatchObject({
      measured: "6 ×",
      met: false,
      stack: { measured: "3 ×", met: false },
    });
    expect(table.get("emit p50 ≤ 1.5 × floor_commit")?.stack).toEqual({ measured: "1.4 ×", met: true });
    expect(table.get("tool_dispatch p50 ≤ 1.5 × floor_notify.commit_to_listener")?.stack).toEqual({
      measured: "2 ×",
      met: false,
    });
    // 4,000 ÷ 700 calls/s (counts over 3 s): the bare stack reaches 5 × pg-boss where Brain (1.43 ×) does not.
    expect(table.get("tool_throughput ≥ 5 × pgboss_roundtrip.throughput")).toMatchObject({
      measured: "1.43 ×",
      met: false,
      stack: { measured: "5.71 ×", met: true },
    });
    // 1.2 cores ÷ 4,000 calls/s.
    expect(table.get("CPU per tool call ≤ 0.5 ms")?.stack).toEqual({ measured: "0.3 ms", met: true });
    expect(table.get("call round trip ≤ ¼ of pgboss_roundtrip")).toMatchObject({
      measured: "0.3 ×",
      met: false,
      stack: { measured: "0.2 ×", met: true },
    });
    // No bare-stack figure for it: no column.
    expect(table.get("text turn p50 flat in journal size (largest ÷ smallest ≤ 1.2)")?.stack).toBeUndefined();
  });

  it("says how much of each path is Brain's own code", () => {
    const r = (name: string) => list.find((x) => x.name === name)?.value;
    expect(r("turn_text ÷ floor_stack")).toBe(2);
    expect(r("tool_dispatch.to_host_socket ÷ floor_stack")).toBe(2);
    expect(r("call_roundtrip ÷ floor_stack")).toBe(1.5);
    expect(r("floor_stack ÷ tool_throughput")).toBe(4);
    expect(r("CPU per call, bare stack (ms)")).toBe(0.3);
    expect(r("CPU per tool call ÷ floor_stack")).toBe(5);
  });
});

// The journal's column: the same targets on floor_stack_journal's figures (the bare stack writing
// Brain's journal statements), beside the bare stack's.
describe("the targets table against Brain's journal on the stack", () => {
  const figures = [
    latency("floor_commit", [0.5, 0.5, 0.5]),
    rate("pgboss_roundtrip.throughput", "calls/s", 1_000, 3),
    value("turn_text.commits", "commits/turn", 3, 2),
    latency("turn_text", [6, 6, 6]),
    rate("tool_throughput", "calls/s", 3_000, 3, { cpu: { server: 0.4, host: 0.2, postgres: 0.2 } }),
    rate("floor_stack.throughput", "calls/s", 30_000, 3, { cpu: { server: 0.6, host: 0.4, postgres: 0.5 } }),
    latency("floor_stack.turn_text", [1.5, 1.5, 1.5]),
    rate("floor_stack_journal.throughput", "calls/s", 4_500, 3, { cpu: { server: 0.3, host: 0.1, postgres: 0.2 } }),
    latency("floor_stack_journal.turn_text", [2.5, 2.5, 2.5]),
    latency("floor_stack_journal.emit", [1.5, 1.5, 1.5]),
    latency("floor_notify.commit_to_listener", [0.5, 0.5, 0.5]),
    latency("tool_dispatch", [2, 2, 2]),
    latency("floor_stack.dispatch", [0.5, 0.5, 0.5]),
    latency("floor_stack_journal.dispatch", [1, 1, 1]),
  ];
  const list = ratios(figures);
  const table = new Map(targets(list, figures).map((t) => [t.target, t]));

  it("judges each target on the journal's stack beside the bare one", () => {
    // Brain 1,000, the bare stack 10,000 and the journal 1,500 calls/s (counts over 3 s) against
    // pg-boss's 333: the bare stack reaches 5 × pg-boss, the journal alone does not, so its
    // statements stop Brain whatever the rest costs.
    expect(table.get("tool_throughput ≥ 5 × pgboss_roundtrip.throughput")).toMatchObject({
      measured: "3 ×",
      met: false,
      stack: { measured: "30 ×", met: true },
      journal: { measured: "4.5 ×", met: false },
    });
    // Brain 0.8 cores ÷ 1,000 calls/s; the journal 0.6 ÷ 1,500 meets what Brain misses.
    expect(table.get("CPU per tool call ≤ 0.5 ms")).toMatchObject({
      measured: "0.8 ms",
      met: false,
      stack: { measured: "0.15 ms", met: true },
      journal: { measured: "0.4 ms", met: true },
    });
    // 2.5 ms ÷ (2 × 0.5 ms): the journal's two commits alone miss the text-turn target.
    expect(table.get("turn_text p50 ≤ 2 × (commits × floor_commit)")).toMatchObject({
      stack: { measured: "1.5 ×", met: true },
      journal: { measured: "2.5 ×", met: false },
    });
    expect(table.get("emit p50 ≤ 1.5 × floor_commit")?.journal).toEqual({ measured: "3 ×", met: false });
    // No journal figure for it: no verdict.
    expect(table.get("call round trip ≤ ¼ of pgboss_roundtrip")?.journal).toBeUndefined();
    // The stacks time a dispatch over a longer span than Brain's (from the intents' submit): the
    // bare stack's may still say a target is within reach, the journal's is not taken for a floor.
    expect(table.get("tool_dispatch p50 ≤ 1.5 × floor_notify.commit_to_listener")).toMatchObject({
      stack: { measured: "1 ×", met: true },
    });
    expect(table.get("tool_dispatch p50 ≤ 1.5 × floor_notify.commit_to_listener")?.journal).toBeUndefined();
  });

  it("says how much of Brain's throughput and CPU is its journal's", () => {
    const r = (name: string) => list.find((x) => x.name === name)?.value;
    expect(r("floor_stack_journal ÷ tool_throughput")).toBe(1.5);
    expect(r("CPU per call, Brain's journal on the stack (ms)")).toBe(0.4);
    expect(r("CPU per tool call ÷ floor_stack_journal")).toBe(2);
  });
});
