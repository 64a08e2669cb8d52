// Runs N one-write batches through a JournalWriter and prints the heap growth the second half of
// them left behind (after forced GCs), for db/test/writer-heap.test.ts. Run with --expose-gc.
import { randomUUID } from "node:crypto";
import { channelFor, emptyKeys } from "@aexhq/brain-db/commits";
import { connect } from "@aexhq/brain-db/connect";
import { JournalWriter } from "@aexhq/brain-db/writer";

const [url, n] = [process.argv[2], Number(process.argv[3])];
const sql = connect(url, { schema: "brain", max: 2, applicationName: "brain-test-heap" });
const writer = new JournalWriter(sql, { channel: channelFor("brain"), origin: randomUUID() });
// One statement, its keys known in advance: the batch is one round trip, as the hot path's are.
const op = { notify: emptyKeys(), keys: () => emptyKeys(), run: (tx) => tx`SELECT 1`.then(() => 1) };
const batches = async (count) => {
  for (let i = 0; i < count; i++) await writer.submit(op);
};
// What a batch leaves behind, as a slope: the heap (after forced GCs) after a warm-up and half the
// batches, then after the other half. A leak grows in both halves alike; what the process grows
// once (JIT of a late path, a pool's or a map's first growth) lands in the warm-up or the first
// half, so a loaded machine's timing does not pass for a leak.
const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};
await batches(1000); // warm: JIT, the lane, its mark
await batches(Math.floor(n / 2));
const mid = heap();
await batches(n - Math.floor(n / 2));
const after = heap();
const measured = n - Math.floor(n / 2);
process.stdout.write(`${JSON.stringify({ batches: measured, grewBytes: after - mid })}\n`);
await writer.close();
await sql.end({ timeout: 1 });
