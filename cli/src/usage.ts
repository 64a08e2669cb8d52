/** `brain help`: every command, its options, the environment and the exit codes. */
export const USAGE = `Usage: brain <command> [options]

  start                          a server and an in-process worker (what npm start does)
  worker                         a worker alone
  migrate [--print-sql [--all]] [--grant-to ROLE] [--citus]
                                 migrate the schema and install pg-boss's, or print that SQL;
                                 give a runtime role DML on both schemas; distribute the
                                 tables on a Citus cluster
  sessions ls [--limit N]        recent sessions                       (HTTP API)
  sessions show <id>             a session and its latest records      (HTTP API)
  sessions tail <id> [--after N] follow a session's journal live       (HTTP API)
  sessions fork <id> --at N [--model JSON] [--system TEXT]
                                 a new session from its journal up to N (HTTP API)
  calls ls [--open] [--limit N]  tool calls, or only those not ended   (SQL)
  calls cancel <session> <seq>   cancel one call                       (HTTP API)
  approvals ls <session>         calls waiting for approval            (HTTP API)
  approvals approve <session> <call> [--input JSON]   dispatch it, as asked or edited
  approvals deny <session> <call> [--reason TEXT]     end it denied, for the model to read
  prune [--older-than 7d] [--dry-run]   delete what retention bounds now
  sql [-- psql args]             psql on the database, Brain's schema on the search_path
  doctor                         check the database, schema, LISTEN/NOTIFY, durability, clocks,
                                 servers, workers
  keys generate                  print a new secret key (64 hex digits)
  keys rotate                    re-seal every session secret under BRAIN_SECRET_KEY's first key
  keys status                    the session secrets each key seals (exit 1: one not in the ring)

  --json                         machine-readable output (NDJSON for sessions tail)

Environment: DATABASE_URL (else the embedded Postgres under BRAIN_DATA_DIR), BRAIN_DATABASE_PASSWORD_FILE, BRAIN_SCHEMA,
BRAIN_DATA_DIR, BRAIN_RETENTION_DAYS, BRAIN_SECRET_KEY (keys: the ring, comma-separated, new first); BRAIN_URL and BRAIN_TOKEN for the HTTP API (default
http://127.0.0.1:3210 and the operator token saved by brain start).
Exit codes: 0 ok, 1 failure, 2 usage.
`;
