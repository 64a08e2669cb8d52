-- The input of the journal writer's merged statements (appends, call transitions): a JSON array
-- with one small object per write, read as a set.
--
-- The planner has no way to know how many writes a statement carries, and assumes a set-returning
-- function yields 100 rows. Against 100 rows, hashing a whole table (sessions, calls) looks
-- cheaper than probing its primary key once per write, and a prepared statement keeps the plan it
-- chose on the sixth execution for its connection's life: as the tables grew, every append and
-- every finish read all of `sessions` or all of `calls`, for a statement that touches a few rows
-- (issue 14: a third of the database's CPU under tool_throughput). A statement carries a handful
-- of writes (at most the writer's batch), so `ROWS 1` is the estimate that leads to one primary
-- key probe per write, the right plan at every table size.
--
-- STRICT keeps the function from being inlined, which would put jsonb_array_elements' estimate
-- back in its place.
CREATE FUNCTION write_inputs(inputs jsonb) RETURNS SETOF jsonb
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE ROWS 1
  AS $$ SELECT jsonb_array_elements(inputs) $$;
