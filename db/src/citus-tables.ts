/**
 * Brain on a Citus cluster (docs/scaling.md): every table of a session's hot path is distributed
 * by session id and co-located with `sessions`, so a turn's, a tool call's and an emit's
 * statements each go to one worker; small shared tables are reference tables, copied to every
 * node; the rest stays on the coordinator (the migrations, the writer's marks, idempotency keys,
 * pg-boss's schema).
 */
export const DISTRIBUTED = [
  "records",
  "calls",
  "activation_budgets",
  "environments",
  "session_secrets",
  "tool_model_calls",
  "trace_cursors",
  "workspace_files",
  "session_hosts",
  "mcp_tasks",
] as const;

/** Referenced ones first: a reference table's foreign keys may only name reference tables. */
export const REFERENCE = [
  "app_tokens",
  "servers",
  "hosts",
  "components",
  "component_uploads",
  "host_replicas",
  "host_connections",
] as const;
