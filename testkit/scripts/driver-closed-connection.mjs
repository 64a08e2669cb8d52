// A reserved connection and a transaction whose backends are terminated under them, then used:
// postgres.js 3.4.9 as published dies here of an uncaught TypeError. With `--patched` it runs the
// copy Brain loads (db/driver/ patches, applied by `npm run build`). Prints one JSON line of
// what each step answered; exits 0 only if the process survived to print it.
const [url, flag] = process.argv.slice(2);
const { default: postgres } = await import(
  flag === "--patched" ? new URL("../../db/dist/driver/postgres/index.js", import.meta.url).href : "postgres"
);

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
    (e) => e.code ?? String(e),
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

// The pool goes on: it reconnects both connections and answers queries sent at once.
answers.after = await settle(Promise.all(Array.from({ length: 6 }, () => sql`SELECT 1`)));

// A reservation whose connection the pool has reconnected since for other queries: what it sends
// must not run in the session that is now someone else's.
const one = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5, onclose: () => closes++ });
const stale = await one.reserve();
const [{ pid: held }] = await stale`SELECT pg_backend_pid() AS pid`;
await kill(held);
await one`SELECT 1`;
answers.stale = await settle(stale`SELECT 1`);

process.stdout.write(`${JSON.stringify(answers)}\n`);
await Promise.race([
  Promise.all([sql.end({ timeout: 1 }), one.end({ timeout: 1 }), admin.end({ timeout: 1 })]),
  new Promise((resolve) => setTimeout(resolve, 2000)),
]);
process.exit(0);
