import { payloadOf, periodic } from "@aexhq/brain-contracts";
import {
  advanceTraceCursors,
  observedCalls,
  openStarts,
  type TraceBacklog,
  TraceLease,
  type TraceRecord,
  traceBacklog,
  traceContext,
  traceRecordsAfter,
} from "@aexhq/brain-db/ops";
import { type Resource, resourceFromAttributes } from "@opentelemetry/resources";
import type { Services } from "../services.js";
import { exportSpans, OtlpExportError } from "./otlp.js";
import type { TraceExportConfig } from "./otlp-config.js";
import { type JournalSpan, observationsOf, spansOf, startsNeeded, toolCallsEnding } from "./spans.js";

/** What the exporter uses of the server. */
export type TraceExporterDeps = Pick<Services, "config" | "sql" | "log" | "availability" | "bus" | "serverId">;

/** How often the exporter looks for new records (and a server without the lease tries for it). */
export const TRACE_TICK_MS = 1000;
/** Every this many ticks, every session is checked, not only those commits named. */
const FULL_SCAN_TICKS = 30;
const SESSIONS_PER_TICK = 100;
const RECORDS_PER_SESSION = 1000;
const SPANS_PER_REQUEST = 512;
const MAX_BACKOFF_TICKS = 30;

export interface TraceExporter {
  stop(): Promise<void>;
}

/**
 * Builds OpenTelemetry spans from the journal and exports them over OTLP, on one server at a time
 * (the lease). Commits name the sessions to look at (every server hears every commit through
 * LISTEN); a full scan on taking the lease and every 30 s is the backstop. Each session's cursor
 * advances only after the backend acknowledged its spans. Returns null, and runs nothing, when
 * traces are not configured.
 */
export function startTraceExporter(rt: TraceExporterDeps, tickMs = TRACE_TICK_MS): TraceExporter | null {
  const config = rt.config.traces;
  if (!config) return null;
  const lease = new TraceLease(rt.sql, rt.config.schema, `brain-traces:${rt.serverId}`);
  const resource = resourceFromAttributes(config.resource);
  const dirty = new Set<string>();
  let stopped = false;
  let fullScan = true;
  let ticks = 0;
  let failures = 0;
  let waitTicks = 0;
  let warned = false;
  rt.bus.onAnySession((id) => {
    if (!stopped) dirty.add(id);
  });
  rt.bus.onRescan(() => {
    fullScan = true;
  });

  const round = async () => {
    if (!lease.holding) {
      dirty.clear(); // whoever exports reads these; on taking the lease, a full scan finds them all
      if (!(await lease.take())) {
        if (lease.unheldable && !warned) {
          warned = true;
          rt.log.warn(
            "trace export needs BRAIN_DIRECT_URL behind a transaction-mode pooler (its lease is a session lock): not exporting",
          );
        }
        return;
      }
      rt.log.info({ serverId: rt.serverId }, "exporting traces: this server took the trace export lease");
      fullScan = true;
    }
    if (++ticks % FULL_SCAN_TICKS === 0) fullScan = true;
    if (waitTicks > 0) {
      waitTicks--;
      return;
    }
    const only = fullScan ? undefined : [...dirty];
    if (only?.length === 0) return;
    dirty.clear();
    const backlog = await traceBacklog(rt.sql, SESSIONS_PER_TICK, only);
    if (only === undefined && backlog.length < SESSIONS_PER_TICK) fullScan = false;
    if (backlog.length === 0) return;
    try {
      const { spans, cursors, more } = await build(rt, resource, backlog);
      for (const id of more) dirty.add(id);
      await exportAll(rt, config, spans);
      await advanceTraceCursors(rt.sql, cursors);
      if (failures > 0) rt.log.info({ failures }, "trace export works again");
      failures = 0;
    } catch (err) {
      // Retried from the same cursors, with a growing pause; logged once per streak.
      for (const b of backlog) dirty.add(b.sessionId);
      if (failures === 0 && !rt.availability.observe(err)) rt.log.warn({ err }, "trace export failed; retrying");
      failures++;
      waitTicks = Math.min(MAX_BACKOFF_TICKS, 2 ** Math.min(failures, 5));
    }
  };

  const rounds = periodic(round, tickMs, {
    onError: (err) => {
      rt.availability.warnUnlessAway(err, () => rt.log.warn({ err }, "trace export round failed"));
    },
  });
  void rounds.run();
  return {
    async stop() {
      stopped = true;
      await rounds.stop();
      await lease.release();
    },
  };
}

/**
 * Sends the spans in requests of bounded size. A failure (unreachable, 401, 429, 5xx…) throws,
 * to be retried from the same cursors: a configuration fixed later still gets every span. A
 * request the endpoint refuses as such (400, 413) is dropped, or it would block every later one.
 */
async function exportAll(rt: TraceExporterDeps, config: TraceExportConfig, spans: JournalSpan[]): Promise<void> {
  for (let i = 0; i < spans.length; i += SPANS_PER_REQUEST) {
    const chunk = spans.slice(i, i + SPANS_PER_REQUEST);
    try {
      await exportSpans(config, chunk);
    } catch (err) {
      if (!(err instanceof OtlpExportError && err.refused)) throw err;
      rt.log.error({ err, spans: chunk.length }, "the trace endpoint refused spans; they are dropped");
    }
  }
}

/** Spans ending in each session's next page, the cursors to set once they are exported. */
async function build(rt: TraceExporterDeps, resource: Resource, backlog: TraceBacklog[]) {
  const spans: JournalSpan[] = [];
  const cursors: { sessionId: string; seq: number }[] = [];
  const more: string[] = [];
  for (const b of backlog) {
    const page = await traceRecordsAfter(rt.sql, b.sessionId, b.exportedSeq, RECORDS_PER_SESSION);
    const last = page.at(-1);
    if (!last) continue;
    if (last.seq < b.lastSeq) more.push(b.sessionId);
    const inPage = new Set(page.map((r) => r.seq));
    const needed = [1, ...startsNeeded(page)].filter((seq) => !inPage.has(seq));
    const context = await traceContext(rt.sql, b.sessionId, needed, toolCallsEnding(page), last.seq);
    const known = new Map<number, TraceRecord>();
    for (const r of [...context, ...page]) known.set(r.seq, r);
    // Activations ending here that background results woke: which calls those results came from.
    const observations = page.flatMap((r) => {
      const start = known.get(payloadOf(r, "activation_ended")?.activation ?? 0);
      return start ? observationsOf(start) : [];
    });
    const observed = new Map((await observedCalls(rt.sql, b.sessionId, observations)).map((o) => [o.seq, o] as const));
    const ended = page.find((r) => r.kind === "session_ended");
    const openAtEnd = ended ? await openStarts(rt.sql, b.sessionId, ended.seq) : [];
    spans.push(...spansOf({ sessionId: b.sessionId, page, known, resource, observed, openAtEnd }));
    cursors.push({ sessionId: b.sessionId, seq: last.seq });
  }
  return { spans, cursors, more };
}
