import { randomUUID } from "node:crypto";
import { channelFor } from "@aexhq/brain-db/commits";
import { connect, type Sql } from "@aexhq/brain-db/connect";
import { migrate } from "@aexhq/brain-db/migrate";
import { appendUnchecked, createSession, insertHost, registerServer, transitionCall } from "@aexhq/brain-db/ops";
import { JournalWriter } from "@aexhq/brain-db/writer";
import { type Figure, latency } from "../measure/stats.js";
import type { Scenario } from "../runner/context.js";
import { CpuMeter } from "../runner/proc.js";

const SCHEMA = "brain";

/**
 * Brain's own journal commit, alone: the server's JournalWriter appending to one session, each
 * append awaited before the next, with no server, host, HTTP or Agentloop around it. It sits
 * between `floor_commit` (the physical floor) and the Brain scenarios: what a sequential step
 * costs in Brain's journal statement (dense sequences under the session row's lock, the writer's
 * mark, the NOTIFY of its keys) against what it costs in the processes around it. An emit's commit
 * is a call transition (the open-call check, the activation's budget, the call row), timed too.
 */
export const floorJournal: Scenario = {
  name: "floor_journal",
  baseline: true,
  async run(ctx) {
    const sql = connect(ctx.databaseUrl, {
      schema: SCHEMA,
      searchPath: true,
      max: 2,
      applicationName: "bench-floor-journal",
    });
    const writer = new JournalWriter(sql, { channel: channelFor(SCHEMA), origin: randomUUID() });
    try {
      await migrate(sql, SCHEMA);
      const { sessionId, hostId } = await bareSession(sql, writer);
      const call = await openCall(writer, sessionId, hostId);
      const emit = () =>
        transitionCall({ ...call, hostId }, { type: "emit", kind: "bench.tick", data: { k: 1 } }, 1e15);
      const n = ctx.quick ? 1_000 : 5_000;
      const one = () => appendUnchecked(sessionId, [{ kind: "bench.one", payload: { call: 1, data: { k: 1 } } }]);
      // A text turn's first commit: the user's message, the activation it starts and its model call.
      const three = () =>
        appendUnchecked(sessionId, [
          { kind: "bench.user_message", payload: { text: "hello" } },
          { kind: "bench.activation_started", payload: { cause: "user_message" } },
          { kind: "bench.model_call_started", payload: { model: "scripted" } },
        ]);
      for (let i = 0; i < 200; i++) {
        await writer.submit(i % 2 ? one() : three());
        await writer.submit(emit());
      }
      const oneMs: number[] = [];
      const threeMs: number[] = [];
      const emitMs: number[] = [];
      const cpu = new CpuMeter(() => ({ bench: process.pid }), ctx.database);
      cpu.start();
      // Interleaved, so that both figures see the same moments of a shared machine.
      for (let i = 0; i < n; i++) {
        let a = performance.now();
        await writer.submit(one());
        oneMs.push(performance.now() - a);
        a = performance.now();
        await writer.submit(three());
        threeMs.push(performance.now() - a);
        a = performance.now();
        const emitted = await writer.submit(emit());
        emitMs.push(performance.now() - a);
        if (emitted.seq === null) throw new Error("floor_journal: the emit found its call closed");
      }
      cpu.stop();
      const figures: Figure[] = [
        latency("floor_journal.append", oneMs, {
          note: "JournalWriter: one record appended and committed (BEGIN, mark, append, NOTIFY, COMMIT), sequential",
          cpu: cpu.last,
        }),
        latency("floor_journal.append_3", threeMs, {
          note: "the same with three records in one append (a text turn's first commit)",
        }),
        latency("floor_journal.emit", emitMs, {
          note: "one emit's transition on an open call committed (an `emit` scenario's commit), sequential",
        }),
      ];
      return { figures };
    } finally {
      await writer.close();
      await sql.end();
    }
  },
};

/** A server, a host and an active session with nothing in it, as the journal needs them. */
async function bareSession(sql: Sql, writer: JournalWriter): Promise<{ sessionId: string; hostId: string }> {
  const serverId = randomUUID();
  const hostId = randomUUID();
  const id = randomUUID();
  await registerServer(sql, serverId);
  await insertHost(sql, hostId, null, Buffer.alloc(1));
  // Named in its metadata: a database kept with --keep-db shows which scenario wrote it.
  await writer.submit(
    createSession({
      id,
      hostId,
      ownerId: serverId,
      model: { provider: "scripted", script: [] },
      tools: [],
      metadata: { bench: "floor_journal" },
      created: { model: { provider: "scripted" }, tools: [], hostId },
    }),
  );
  return { sessionId: id, hostId };
}

/** A running call of the host's, dispatched: what emits report on. */
async function openCall(writer: JournalWriter, sessionId: string, hostId: string) {
  const started = await writer.submit(
    appendUnchecked(sessionId, [
      {
        kind: "tool_call_started",
        payload: { name: "bench_emit", input: {} },
        call: {
          tool: "bench_emit",
          activationSeq: null,
          hostId,
          connectionId: null,
          state: "running",
          deadlineAt: null,
        },
      },
    ]),
  );
  const seq = started.records[0]?.seq;
  if (seq === undefined) throw new Error("floor_journal: the call was not started");
  return { sessionId, seq };
}
