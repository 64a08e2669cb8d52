// Gathers what the run's own participants saw into RunRecords: the hosts' record files (a line
// cut short by a SIGKILL is skipped: its write never completed, so nothing relied on it), the
// clients' acknowledgements and the target's request counts.
import { existsSync, readFileSync } from "node:fs";
import type { HostRecord } from "./host-tools.js";
import type { RunRecords } from "./invariants.js";
import type { ClientAck, LateWait } from "./load.js";

export function gatherRecords(
  hostFiles: string[],
  clientAcks: ClientAck[],
  lateWaits: LateWait[],
  received: Map<number, number>,
): RunRecords {
  const records: RunRecords = { invocations: [], acks: [], finished: [], httpRequests: [], lateWaits };
  for (const file of hostFiles) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n")) {
      let r: HostRecord;
      try {
        r = JSON.parse(line) as HostRecord;
      } catch {
        continue;
      }
      if (r.t === "invoke")
        records.invocations.push({ session: r.session, call: r.call, tool: r.tool, n: r.n, pid: r.pid });
      else if (r.t === "ack")
        records.acks.push({ source: "host", session: r.session, seq: r.seq, kind: r.kind, call: r.call });
      else if (r.t === "finished") records.finished.push({ session: r.session, call: r.call });
    }
  }
  for (const a of clientAcks)
    records.acks.push({ source: "client", session: a.session, seq: a.seq, kind: a.kind, call: null });
  for (const [n, requests] of received) records.httpRequests.push({ n, requests });
  return records;
}
