// The application of the dbos_roundtrip baseline: DBOS Transact in its own process, as a team
// would run it. One call is one durable workflow with one step (the tool's work: it returns its
// input), started and awaited in this process; DBOS records the workflow and the step's output
// in its system tables on the same Postgres before the caller gets the result.
import { DBOS } from "@dbos-inc/dbos-sdk";
import { serve } from "../runner/rpc.js";

export interface DbosArgs {
  url: string;
  schema: string;
}

export interface Sustained {
  completed: number;
  underLoad: number[];
}

const tool = DBOS.registerStep(async (i: number) => ({ i }), { name: "tool" });
const call = DBOS.registerWorkflow(async (i: number) => tool(i), { name: "call" });

/** One call: the workflow started (durably) and its result awaited, in ms. */
async function once(i: number): Promise<number> {
  const t0 = performance.now();
  const handle = await DBOS.startWorkflow(call)(i);
  await handle.getResult();
  return performance.now() - t0;
}

serve({
  async start(args: DbosArgs): Promise<null> {
    DBOS.setConfig({
      name: "bench-dbos",
      systemDatabaseUrl: args.url,
      systemDatabaseSchemaName: args.schema,
      systemDatabasePoolSize: 20,
      logLevel: "error",
    });
    await DBOS.launch();
    return null;
  },
  async sequential(args: { n: number }): Promise<number[]> {
    const samples: number[] = [];
    for (let i = 0; i < args.n; i++) samples.push(await once(i));
    return samples;
  },
  async sustained(args: { lanes: number; warmupMs: number; windowMs: number }): Promise<Sustained> {
    const start = performance.now() + args.warmupMs;
    const end = start + args.windowMs;
    let completed = 0;
    const underLoad: number[] = [];
    await Promise.all(
      Array.from({ length: args.lanes }, async (_, lane) => {
        for (let i = 0; performance.now() < end; i++) {
          const t0 = performance.now();
          const ms = await once(lane * 1_000_000 + i);
          const t1 = performance.now();
          if (t1 >= start && t1 <= end) completed++;
          if (t0 >= start && t1 <= end) underLoad.push(ms);
        }
      }),
    );
    return { completed, underLoad };
  },
  async stop(): Promise<null> {
    await DBOS.shutdown();
    return null;
  },
});
