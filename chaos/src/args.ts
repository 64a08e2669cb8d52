import { parseArgs } from "node:util";

export const FAULT_KINDS = [
  "server_kill",
  "worker_kill",
  "host_kill",
  "pg_restart_fast",
  "pg_restart_immediate",
  "pg_terminate_backends",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
/** What --failover adds: once, the primary killed and its synchronous standby promoted. */
export type LoggedFault = FaultKind | "pg_failover";
/** The faults --failover runs beside its fail-over: the processes' (its Postgres is not restarted). */
const PROCESS_FAULTS: FaultKind[] = ["server_kill", "worker_kill", "host_kill"];

export interface ChaosOptions {
  seed: number;
  /** How long load and faults run; then faults stop and the quiet period begins. */
  seconds: number;
  /** Sessions per host process (there are two host processes). */
  sessionsPerHost: number;
  /** Pause between faults, min and max, in ms. */
  faultGapMs: [number, number];
  faults: FaultKind[];
  /** Keep the run directory (logs, host records) even when every check passes. */
  keep: boolean;
  /**
   * Servers and the worker reach Postgres through PgBouncer in transaction mode: with
   * BRAIN_DIRECT_URL for LISTEN and the writer ("direct"), or without it, polling ("polling").
   */
  pooler: "direct" | "polling" | null;
  /** A primary and a synchronous standby; the primary is killed and the standby promoted once. */
  failover: boolean;
  /** A Citus cluster, Brain's tables distributed; the pg_restart faults restart a worker node. */
  citus: boolean;
}

const USAGE = `usage: npm run chaos -- [--quick] [--seconds N] [--seed N] [--faults k1,k2,...] [--failover] [--pooler M] [--citus] [--keep]
  --quick      a short run for CI (60 s of faults)
  --seconds N  seconds of load with faults (default 180)
  --seed N     reproduces the scripts and the fault schedule (default: random, printed)
  --faults     subset of ${FAULT_KINDS.join(",")} (default: all)
  --failover   a primary and a synchronous standby: the primary killed and the standby promoted
               under load, once (other faults: the processes' only)
  --pooler M   through PgBouncer (transaction mode), with a direct URL for LISTEN (direct) or
               without one, polling (polling)
  --citus      a Citus cluster (a coordinator and two workers; Citus installed by vendor/citus),
               Brain's tables distributed: pg_restart faults restart a worker node
  --keep       keep the run directory (server, worker and host logs) even on success`;

export function parseOptions(argv: string[]): ChaosOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      seconds: { type: "string" },
      seed: { type: "string" },
      faults: { type: "string" },
      keep: { type: "boolean", default: false },
      pooler: { type: "string" },
      failover: { type: "boolean", default: false },
      citus: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const number = (name: string, text: string | undefined, fallback: number) => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} takes a non-negative integer\n${USAGE}`);
    return n;
  };
  const all = values.failover ? PROCESS_FAULTS : [...FAULT_KINDS];
  const faults = (values.faults?.split(",").map((s) => s.trim()) ?? all) as FaultKind[];
  for (const f of faults) {
    if (!all.includes(f))
      throw new Error(`unknown fault ${JSON.stringify(f)}${values.failover ? " with --failover" : ""}\n${USAGE}`);
  }
  const pooler = values.pooler ?? null;
  if ([pooler !== null, values.failover, values.citus].filter(Boolean).length > 1)
    throw new Error(`--failover, --pooler and --citus: one at a time\n${USAGE}`);
  if (pooler !== null && pooler !== "direct" && pooler !== "polling")
    throw new Error(`--pooler takes direct or polling\n${USAGE}`);
  return {
    seed: number("seed", values.seed, Math.floor(Math.random() * 2 ** 31)),
    seconds: number("seconds", values.seconds, values.quick ? 60 : 180),
    sessionsPerHost: values.quick ? 2 : 3,
    faultGapMs: values.quick ? [2_000, 4_000] : [2_000, 6_000],
    faults,
    keep: values.keep,
    pooler,
    failover: values.failover,
    citus: values.citus,
  };
}
