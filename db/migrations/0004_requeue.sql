-- When a component call's job was last enqueued again because it seemed lost (a worker that died
-- between fetching the job and claiming the call). Claims are conditional, so a job enqueued twice
-- still runs the call at most once.
ALTER TABLE calls ADD COLUMN requeued_at timestamptz;
