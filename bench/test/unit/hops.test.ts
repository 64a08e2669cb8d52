import { describe, expect, it } from "vitest";
import { hopFigures, lineUp } from "../../src/probes/hops.js";

// Two processes' hops, as hop-probe.ts writes them, for three sequential calls 10 ms apart, with
// a stray heartbeat write in the server and a hop outside the measured window.
function calls(n: number) {
  const server: [string, number][] = [];
  const host: [string, number][] = [];
  for (let i = 0; i < n; i++) {
    const t = 1000 + i * 10;
    server.push(["writer.batch-sent", t], ["writer.batch-committed", t + 1], ["server.invoke-sent", t + 1.1]);
    host.push(["sdk.frame-received", t + 1.25], ["sdk.frame-sent", t + 1.5]);
    server.push(["server.frame-received", t + 1.6]);
  }
  return { server, host };
}

describe("lineUp", () => {
  it("merges the processes by time into steps, in the order the path takes them", () => {
    const { server, host } = calls(30);
    const steps = lineUp({ server, host }, { start: 0, end: 10_000 });
    expect(steps.slice(0, 6).map((s) => s.step)).toEqual([
      "server:writer.batch-sent → server:writer.batch-committed",
      "server:writer.batch-committed → server:server.invoke-sent",
      "server:server.invoke-sent → host:sdk.frame-received",
      "host:sdk.frame-received → host:sdk.frame-sent",
      "host:sdk.frame-sent → server:server.frame-received",
      "server:server.frame-received → server:writer.batch-sent",
    ]);
    const crossing = steps.find((s) => s.step === "server:server.invoke-sent → host:sdk.frame-received")!;
    expect(crossing.ms).toHaveLength(30);
    for (const ms of crossing.ms) expect(ms).toBeCloseTo(0.15, 6);
  });

  it("keeps to the window and leaves out steps rarer than a tenth of the commonest", () => {
    const { server, host } = calls(30);
    server.push(["writer.batch-sent", 1005], ["writer.batch-committed", 1005.5]);
    server.push(["server.invoke-sent", 50_000]);
    const steps = lineUp({ server, host }, { start: 1000, end: 1300 });
    const names = steps.map((s) => s.step);
    // The heartbeat's two steps happened once among 30 calls: left out.
    expect(names.filter((n) => n.includes("writer.batch-committed → server:writer.batch-sent"))).toEqual([]);
    const commit = steps.find((s) => s.step === "server:writer.batch-sent → server:writer.batch-committed")!;
    expect(commit.ms).toHaveLength(31);
    // Nothing from outside the window: the last call's frame-received is the last hop in it.
    expect(Math.max(...steps.flatMap((s) => s.ms))).toBeLessThan(10);
  });

  it("names each step's figure after its scenario", () => {
    const { server, host } = calls(3);
    const figures = hopFigures("turn_one_tool", lineUp({ server, host }, { start: 0, end: 10_000 }));
    expect(figures[0]).toMatchObject({
      name: "turn_one_tool hop · server:writer.batch-sent → server:writer.batch-committed",
      kind: "latency",
      n: 3,
      p50: 1,
    });
  });
});
