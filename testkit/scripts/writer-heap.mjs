// Runs N one-write batches through a JournalWriter and prints the heap growth they left behind
// (after a forced GC), for db/test/writer-heap.test.ts. Run with --expose-gc.
import { randomUUID } from "node:crypto";
import { channelFor, connect, emptyKeys, JournalWriter } from "@aexhq/brain-db";

const [url, n] = [process.argv[2], Number(process.argv[3])];
const sql = connect(url, { schema: "brain", max: 2, applicationName: "brain-test-heap" });
const writer = new JournalWriter(sql, { channel: channelFor("brain"), origin: randomUUID() });
// One statement, its keys known in advance: the batch is one round trip, as the hot path's are.
const op = { notify: emptyKeys(), keys: () => emptyKeys(), run: (tx) => tx`SELECT 1`.then(() => 1) };
const batches = async (count) => {
  for (let i = 0; i < count; i++) await writer.submit(op);
};
await batches(500); // warm: JIT, the lane, its mark
globalThis.gc();
const before = process.memoryUsage().heapUsed;
await batches(n);
globalThis.gc();
const after = process.memoryUsage().heapUsed;
process.stdout.write(`${JSON.stringify({ batches: writer.stats.batches, grewBytes: after - before })}\n`);
await writer.close();
await sql.end({ timeout: 1 });
