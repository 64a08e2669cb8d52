// A reserved connection and a transaction whose backends are terminated under them, then used:
// postgres.js 3.4.9 unpatched dies here of an uncaught TypeError (db/src/driver/patch.ts). With
// `--patched` the driver is loaded through Brain's edits first. Prints one JSON line of what each
// query answered; exits 0 only if the process survived to print it.
import { installDriverPatch } from "@aexhq/brain-db/driver-patch";

const [url, flag] = process.argv.slice(2);
if (flag === "--patched") installDriverPatch();
const { default: postgres } = await import("postgres");

// Each kill waits until the pool has seen that connection close (its onclose), so the next query
// meets a closed connection, not one whose close is still on its way.
let closes = 0;
const sql = postgres(url, { max: 2, onnotice: () => {}, connect_timeout: 5, onclose: () => closes++ });
const admin = postgres(url, { max: 1, onnotice: () => {} });
async function kill(pid) {
  const before = closes;
  await admin`SELECT pg_terminate_backend(${pid})`;
  while (closes === before) await new Promise((resolve) => setTimeout(resolve, 10));
}
const settle = (p) =>
  p.then(
    () => "answered",
    (e) => e.code ?? (process.env.DEBUG_STACK ? e.stack : String(e)),
  );
const answers = {};

// A reserved connection used after its backend was terminated.
const reserved = await sql.reserve();
const [{ pid }] = await reserved`SELECT pg_backend_pid() AS pid`;
await kill(pid);
answers.reserved = await settle(reserved`SELECT 1`);

// A transaction whose backend is terminated while it runs: the driver sends its ROLLBACK.
answers.transaction = await settle(
  sql.begin(async (tx) => {
    const [{ pid: own }] = await tx`SELECT pg_backend_pid() AS pid`;
    await kill(own);
    await tx`SELECT 1`;
  }),
);

// The pool goes on: it reconnects what closed and answers again.
answers.after = await settle(
  (async () => {
    for (let i = 0; i < 4; i++) await sql`SELECT 1`;
  })(),
);
process.stdout.write(`${JSON.stringify(answers)}\n`);
await Promise.race([
  Promise.all([sql.end({ timeout: 1 }), admin.end({ timeout: 1 })]),
  new Promise((resolve) => setTimeout(resolve, 2000)),
]);
process.exit(0);
