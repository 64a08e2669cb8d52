// PgBouncer for the tests lives with the chaos run, which puts it in front of its cluster too.
export { type PgBouncer, pgBouncerBinary, startPgBouncer } from "../chaos/dist/pgbouncer.js";
