import type { Sql } from "postgres";
import { type Figure, latency } from "../measure/stats.js";
import { type Scenario, withBrain } from "../runner/context.js";
import type { AlternateArgs, AlternateResult, PrepareArgs } from "./host-protocol.js";

/** Journal sizes (records before the measured turns) whose text-turn latency is compared. */
export const JOURNAL_SIZES = [10, 1_000, 10_000];

/**
 * Does a turn cost more as the session's journal grows? Sequential text turns (turn_text's shape)
 * in sessions whose journals already hold about 10, 1,000 and 10,000 records. The records are
 * real: written through the API by prefill turns whose tool emits extension events (host.ts,
 * `bench_fill`), so every row is what the journal writer appends. One server, warmed first on a
 * session of its own; the measured turns alternate between the sessions (one turn each, round
 * after round), so the shared machine's noise falls on every size alike. Each text turn appends 6
 * records, so the smallest journal grows during the measurement (the note says by how much).
 */
export const journalSize: Scenario = {
  name: "journal_size",
  run: (ctx) =>
    withBrain(ctx, "journal_size", {}, async (brain) => {
      const turns = ctx.quick ? 100 : 300;
      await brain.host.call("prepare", { kind: "text", turns: 0, warmup: ctx.quick ? 30 : 100 } satisfies PrepareArgs);
      const ids: string[] = [];
      for (const size of JOURNAL_SIZES) {
        const prepare: PrepareArgs = { kind: "text", turns, warmup: 1, prefill: size };
        ids.push((await brain.host.call<{ sessionId: string }>("prepare", prepare)).sessionId);
      }
      const before = await Promise.all(ids.map((id) => records(ctx.sql, id)));
      const r = await brain.host.call<AlternateResult>("alternate", { sessionIds: ids, turns } satisfies AlternateArgs);
      const after = await Promise.all(ids.map((id) => records(ctx.sql, id)));
      const anomalies = r.anomalies.length > 0 ? `; ANOMALIES: ${r.anomalies.slice(0, 3).join("; ")}` : "";
      return JOURNAL_SIZES.map(
        (size, i): Figure =>
          latency(`journal_size.records_${size}`, r.turnMs[ids[i]!] ?? [], {
            note: `text turns, alternating with the other sizes; the journal held ${before[i]} records before them, ${after[i]} after${anomalies}`,
            ...(i === 0 ? { cpu: brain.cpu.last } : {}),
          }),
      );
    }),
};

async function records(sql: Sql, sessionId: string): Promise<number> {
  const [row] = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM brain.records WHERE session_id = ${sessionId}`;
  return row?.n ?? 0;
}
