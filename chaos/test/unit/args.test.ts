import { describe, expect, it } from "vitest";
import { FAULT_KINDS, parseOptions } from "../../src/args.js";

describe("npm run chaos's options", () => {
  it("run every fault by default, on one cluster, without a pooler", () => {
    const o = parseOptions(["--quick", "--seed", "7"]);
    expect(o).toMatchObject({
      seed: 7,
      seconds: 60,
      faults: [...FAULT_KINDS],
      pooler: null,
      failover: false,
      citus: false,
    });
  });

  it("--failover: the processes' faults beside the one fail-over, never a restart of its Postgres", () => {
    expect(parseOptions(["--failover"]).faults).toEqual(["server_kill", "worker_kill", "host_kill"]);
    expect(() => parseOptions(["--failover", "--faults", "pg_restart_fast"])).toThrow(/with --failover/);
    expect(() => parseOptions(["--failover", "--pooler", "direct"])).toThrow(/one at a time/);
  });

  it("--citus: every fault (a restart is a worker node's), alone with neither --failover nor --pooler", () => {
    expect(parseOptions(["--citus"])).toMatchObject({ citus: true, faults: [...FAULT_KINDS] });
    expect(() => parseOptions(["--citus", "--failover"])).toThrow(/one at a time/);
    expect(() => parseOptions(["--citus", "--pooler", "direct"])).toThrow(/one at a time/);
  });

  it("--pooler takes direct or polling", () => {
    expect(parseOptions(["--pooler", "polling"]).pooler).toBe("polling");
    expect(() => parseOptions(["--pooler", "pgpool"])).toThrow(/direct or polling/);
  });
});
