import { setTimeout as sleep } from "node:timers/promises";
import { perSession, reading } from "../measure/memory-reading.js";
import { latency, rate, value } from "../measure/stats.js";
import { type Scenario, withBrain } from "../runner/context.js";
import type { ServerProcess } from "../runner/proc.js";
import type {
  AlternateArgs,
  AlternateResult,
  IdleArgs,
  IdleResult,
  PrepareArgs,
  PrepareResult,
} from "./host-protocol.js";

/** Sessions of the warm-up, created and parked before the reading every figure starts from. */
const WARMUP = 64;
/** Sessions (part of the warm-up's parked ones) whose next turns are timed: parked, then resident. */
const TIMED = 16;

/**
 * Server memory per idle session with history, resident and parked: N sessions, each created with
 * a host tool and given K turns (a bench_echo call, then a text answer), are left idle on one
 * server started with a short BRAIN_SESSION_IDLE_MS. Read (post-GC, as in session_memory) once
 * right after their creation, while every session's Agentloop actor still holds its folded state
 * (the conversation, every call), and again once the server has parked all of them (its /metrics:
 * `brain_sessions_parked` counts them all, `brain_actors` is 0). Both readings are against the
 * same reading taken before the N sessions were created.
 *
 * `.resident_*` is what a session with history costs while its actor is resident; `.parked_*` is
 * what it still costs once parked: the server keeps each parked session's id and the sequence it
 * had reached, and the host connection the ids of the sessions attached to it (a few hundred bytes;
 * the rest of `.parked_heap` is what the process grew once, mostly compiled code, spread over N).
 *
 * `.parked_rss` drops by about what the heap frees, yet stays far above `.parked_heap`: V8 keeps
 * some of the old-space pages that parking emptied committed (`heapTotal` in the note) until a GC
 * that reduces memory, and the allocator keeps what the creation burst grew. Neither is a cost of
 * each parked session, but both are what the process holds right after parking.
 *
 * `.wake_turn` is the price of parking: the first turn of a parked session with the same history
 * (claimed again and rebuilt from the journal), against `.resident_turn`, the turn after it on
 * the same session, its actor resident again. TIMED sessions prepared before the first reading
 * (so they are part of the baseline) take one of each, round after round, after the last reading.
 */
export const parkedMemory: Scenario = {
  name: "parked_memory",
  // Two waits of the idle time (the warm-up's sessions, then the measured ones) on top of the rest.
  timeoutMs: (quick) => (quick ? 120_000 : 300_000),
  run: (ctx) => {
    const count = ctx.quick ? 100 : 500;
    const turns = ctx.quick ? 5 : 10;
    // Every session must still be resident at the first reading, so the idle time has to outlast
    // the whole creation and that reading: a session's idle clock starts at its own last turn, so
    // the first sessions created would otherwise park while later ones still run. On a 2-core
    // machine, creating 500 × 10 tool turns took 10.9–16.7 s and 100 × 5 took 1.5–2.3 s (see the
    // notes of `.create`); 30 s and 8 s leave room for a slower or busier machine, and the
    // scenario fails rather than report a mix of resident and parked sessions if one parked early.
    const idleMs = ctx.quick ? 8_000 : 30_000;
    return withBrain(
      ctx,
      "parked_memory",
      { probe: true, env: { BRAIN_SESSION_IDLE_MS: String(idleMs) } },
      async (brain) => {
        const server = brain.server;
        const idle = async (args: IdleArgs) => {
          const r = await brain.host.call<IdleResult>("idle", args satisfies IdleArgs);
          if (r.anomalies.length > 0) throw new Error(`unexpected answers: ${r.anomalies.slice(0, 5).join("; ")}`);
          return r;
        };
        // Warm the server's code paths first, at the measured concurrency (tool turns, pools, and
        // parking: the warm-up's sessions park before the first reading), so the deltas are
        // sessions rather than JIT and pools, and no warm-up session lets go of its state between
        // two readings. (With 20 sessions 4 at a time, one quick run read resident_heap 18.9 KiB,
        // against 12.0–12.2 with this.)
        await idle({ count: WARMUP - TIMED, concurrency: 16, turns, kind: "tool" });
        const timed: string[] = [];
        for (let i = 0; i < TIMED; i++) {
          const args = { kind: "tool", warmup: turns, turns: 2 } satisfies PrepareArgs;
          timed.push((await brain.host.call<PrepareResult>("prepare", args)).sessionId);
        }
        await untilParked(server, WARMUP, idleMs);
        await sleep(500);
        const start = await reading(server);
        brain.cpu.start();
        const made = await idle({ count, concurrency: 16, turns, kind: "tool" });
        brain.cpu.stop();
        await sleep(1_000);
        const resident = await reading(server);
        const before = await gauges(server);
        if (before.parked !== WARMUP || before.actors !== count) {
          throw new Error(
            `sessions parked before the resident reading (${before.parked - WARMUP} of ${count}; ${before.actors} actors): ` +
              `creation took ${made.seconds.toFixed(1)} s, the idle time is ${idleMs / 1000} s`,
          );
        }
        const t0 = performance.now();
        await untilParked(server, WARMUP + count, idleMs);
        const parkedAfter = (performance.now() - t0) / 1000;
        await sleep(1_000);
        const parked = await reading(server);
        const r = perSession(start, resident, made.created);
        const p = perSession(start, parked, made.created);
        // One turn on each parked timed session, then one more on each: woken, then resident.
        const woken = await brain.host.call<AlternateResult>("alternate", {
          sessionIds: timed,
          turns: 2,
        } satisfies AlternateArgs);
        if (woken.anomalies.length > 0) throw new Error(`unexpected answers: ${woken.anomalies.join("; ")}`);
        const wake = timed.map((id) => woken.turnMs[id]![0]!);
        const again = timed.map((id) => woken.turnMs[id]![1]!);
        const what = `${made.created} idle sessions, each created + ${turns} turns of one bench_echo call and a text answer`;
        const when = `BRAIN_SESSION_IDLE_MS ${idleMs}; all parked ${parkedAfter.toFixed(1)} s after the resident reading`;
        return [
          value("parked_memory.resident_heap", "KiB/session", made.created, r.heap, {
            note: `V8 heapUsed after GC, ${what}, actors resident`,
          }),
          value("parked_memory.resident_rss", "KiB/session", made.created, r.rss, {
            note: `${what}, actors resident: ${r.note}`,
          }),
          value("parked_memory.parked_heap", "KiB/session", made.created, p.heap, {
            note: `V8 heapUsed after GC, the same sessions parked (${when})`,
          }),
          value("parked_memory.parked_rss", "KiB/session", made.created, p.rss, {
            note: `the same sessions parked (${when}): ${p.note}`,
          }),
          latency("parked_memory.wake_turn", wake, {
            note: `the first turn (a bench_echo call and a text answer) of ${TIMED} parked sessions with ${turns} such turns of history: claimed again, rebuilt from the journal`,
          }),
          latency("parked_memory.resident_turn", again, {
            note: `the next turn of the same ${TIMED} sessions, their actors resident again`,
          }),
          rate("parked_memory.create", "turns/s", made.created * turns, made.seconds, {
            note: `${made.created} sessions × ${turns} tool turns, 16 sessions at a time, in ${made.seconds.toFixed(2)} s (context for the memory figures)`,
            cpu: brain.cpu.last,
          }),
        ];
      },
    );
  },
};

/** The server's actor gauges, from its Prometheus /metrics (behind the operator token). */
async function gauges(server: ServerProcess): Promise<{ actors: number; parked: number }> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.token}` } });
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}`);
  const text = await res.text();
  const gauge = (name: string) => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text);
    if (!m?.[1]) throw new Error(`GET /metrics has no ${name}`);
    return Number(m[1]);
  };
  return { actors: gauge("brain_actors"), parked: gauge("brain_sessions_parked") };
}

/**
 * Waits until the server has parked `sessions` sessions and runs no actor. Parking is checked once
 * a second, so it follows the idle time by about a second; the bound leaves 30 s more.
 */
async function untilParked(server: ServerProcess, sessions: number, idleMs: number): Promise<void> {
  const deadline = performance.now() + idleMs + 30_000;
  let last = await gauges(server);
  while (last.parked < sessions || last.actors > 0) {
    if (performance.now() > deadline) {
      throw new Error(
        `the server did not park ${sessions} idle sessions within ${(idleMs + 30_000) / 1000} s ` +
          `(BRAIN_SESSION_IDLE_MS ${idleMs}): brain_sessions_parked ${last.parked}, brain_actors ${last.actors}`,
      );
    }
    await sleep(200);
    last = await gauges(server);
  }
}
