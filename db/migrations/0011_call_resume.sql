-- What a worker needs to pick up a call it did not start: an MCP Environment call that runs as an
-- MCP task records `{ "mcpTask": { "taskId", "sessionId", "protocolVersion" } }` here (with a
-- `brain.mcp_task` record) before it polls. A worker that dies holding such a call does not end it
-- `unknown`: recovery sets it pending again with a new job, and the next worker polls the same task.
ALTER TABLE calls ADD COLUMN resume jsonb;
