-- An Environment's configuration is versioned by a counter, not by the time it changed: a setup
-- records its result only for the revision it ran (db/src/ops/environment-setup.ts). The
-- counter is compared and bumped by plain column arithmetic, which a Citus cluster runs on the
-- session's worker as it is; a clock read beside a column in UPDATE, WHERE or RETURNING it refuses.
ALTER TABLE environments ADD COLUMN revision bigint NOT NULL DEFAULT 0;
