-- The index of open calls by deadline holds only calls that have a deadline (issue 14).
--
-- Most calls have none (a deadline is the caller's choice, and BRAIN_MAX_TOOL_SECS defaults to
-- none), yet every call was entered in this index when it started (and again when it returned,
-- for a call that returns before it finishes): about one index insert in ten under
-- tool_throughput, for entries nothing reads.
-- The index serves the overdue sweep (end-calls.ts), whose `deadline_at <= $1` implies
-- `deadline_at IS NOT NULL`, so the planner still proves this predicate from the sweep's query;
-- db/test/hot-path-plans.test.ts checks that the sweep reads this index.
--
-- Building it reads the whole calls table once, inside the migration's transaction, and writes
-- to calls wait meanwhile (0.1 s for a million cached calls on the machine it was written on; a
-- table read from disk takes as long as reading it): on a large journal, run it at a quiet time
-- (`brain migrate`, or `brain migrate --print-sql` for a DBA to apply).
DROP INDEX calls_open_by_deadline;
CREATE INDEX calls_open_by_deadline ON calls (deadline_at) WHERE state <> 'ended' AND deadline_at IS NOT NULL;
