-- The index of open calls by deadline holds only calls that have a deadline (issue 14).
--
-- Most calls have none (a deadline is the caller's choice, and BRAIN_MAX_TOOL_SECS defaults to
-- none), yet every call was entered in this index when it started, and again when its finish
-- rewrote the row: one index insert in nine under tool_throughput, for entries nothing reads.
-- The index serves the overdue sweep (end-calls.ts), whose `deadline_at <= $1` implies
-- `deadline_at IS NOT NULL`, so the planner still proves this predicate from the sweep's query;
-- db/test/hot-path-plans.test.ts checks that the sweep reads this index.
DROP INDEX calls_open_by_deadline;
CREATE INDEX calls_open_by_deadline ON calls (deadline_at) WHERE state <> 'ended' AND deadline_at IS NOT NULL;
