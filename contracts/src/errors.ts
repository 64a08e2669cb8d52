/**
 * The one list of stable error codes. Server, worker and SDK all speak these strings; docs/errors.md's
 * "Error codes" table is checked against this list by a test, so nothing undocumented exists.
 *
 * `http` is the status the HTTP API answers with; `scope` says where a code can appear:
 * - "api": an HTTP or WebSocket protocol error answered to a caller;
 * - "outcome": the `error.code` of a tool's error outcome, stored in the journal;
 * - "sdk": raised locally by the SDK, never crosses the wire.
 */
export const ERROR_CODES = {
  unauthorized: { http: 401, scope: "api", message: "Missing or invalid bearer token." },
  forbidden: {
    http: 403,
    scope: "api",
    message: "An application token may not do this (token administration needs the operator token).",
  },
  not_found: { http: 404, scope: "api", message: "No such resource." },
  invalid_request: { http: 400, scope: "api", message: "The request body, query or parameters failed validation." },
  body_too_large: { http: 413, scope: "api", message: "The request body exceeds the server's limit." },
  unsupported_media_type: { http: 415, scope: "api", message: "Request bodies must be application/json." },
  idempotency_conflict: {
    http: 409,
    scope: "api",
    message: "This Idempotency-Key was already used with a different request body.",
  },
  session_ended: { http: 409, scope: "api", message: "The session has ended; it accepts no new messages." },
  duplicate_tool: { http: 400, scope: "api", message: "Two tools in one session share a name." },
  duplicate_environment: {
    http: 400,
    scope: "api",
    message: "Two environments in one session share a name with different configurations.",
  },
  host_required: { http: 400, scope: "api", message: "Host tools need a registered host (hostId)." },
  invalid_component: {
    http: 400,
    scope: "api",
    message: "The upload is not a WebAssembly component exporting the brain:tool world (or its digest differs).",
  },
  component_not_found: {
    http: 400,
    scope: "api",
    message: "A tool names a component that has not been uploaded (PUT /v1/components/:sha256).",
  },
  grant_denied: {
    http: 403,
    scope: "api",
    message: "An Environment asks for a grant outside the server's allow-list.",
  },
  invalid_placement: {
    http: 400,
    scope: "api",
    message: "A tool with run belongs in a host environment; a tool with an implementation does not.",
  },
  not_supported: {
    http: 501,
    scope: "api",
    message: "The capability is not available to this caller (e.g. the scripted provider from a tool).",
  },
  invalid_model_request: { http: 400, scope: "api", message: "A tool's ModelRequest failed validation." },
  model_budget_exceeded: {
    http: 409,
    scope: "api",
    message: "The activation's BRAIN_MAX_MODEL_CALLS budget is spent; no model call was made.",
  },
  environment_denied: {
    http: 403,
    scope: "api",
    message: "The session was not authorised for this environment operation (environmentControl).",
  },
  environment_not_found: { http: 404, scope: "api", message: "The session has no environment of that name." },
  environment_exists: { http: 409, scope: "api", message: "The session already has an environment of that name." },
  model_not_granted: {
    http: 403,
    scope: "api",
    message: "The call's Environment was not granted model calls (an HTTP Environment's grants.model).",
  },
  not_ready: { http: 503, scope: "api", message: "The server is starting or stopping." },
  call_not_waiting: {
    http: 409,
    scope: "api",
    message: "The call is not waiting for approval (it was decided, or it ended); nothing was changed.",
  },
  denied: {
    http: 200,
    scope: "outcome",
    message: "A person denied the call at its approval gate; the reason, if given, is in the message.",
  },
  quota_exceeded: {
    http: 429,
    scope: "api",
    message:
      "The application token is at one of its quotas (active sessions, hosts, open calls, component bytes); nothing was created. Also a call's error outcome.",
  },
  busy: {
    http: 429,
    scope: "api",
    message: "The server holds as much of this work as it takes at once (component uploads); retry shortly.",
  },
  database_unavailable: {
    http: 503,
    scope: "api",
    message: "Brain cannot reach its database; nothing was written. Retry once /readyz answers ready.",
  },
  write_conflict: {
    http: 503,
    scope: "api",
    message:
      "The write lost a race with another (a deadlock or a serialization conflict; a Citus cluster's deadlock detection) and was rolled back; nothing was written. Retry.",
  },
  commit_unknown: {
    http: 503,
    scope: "api",
    message: "The database went away during the commit and did not come back in time: the write may have been kept.",
  },
  internal_error: { http: 500, scope: "api", message: "An unexpected server error; it has been logged." },
  invalid_frame: { http: 400, scope: "api", message: "A WebSocket frame failed validation; it was ignored." },
  frame_too_large: { http: 413, scope: "api", message: "A WebSocket frame exceeds the frame size limit." },
  call_not_found: { http: 404, scope: "api", message: "No tool call with that session and sequence on this host." },
  call_ended: {
    http: 409,
    scope: "api",
    message: "The tool call has already ended (finished, timed out, cancelled or lost); nothing more is accepted.",
  },
  reserved_kind: { http: 400, scope: "api", message: "This event kind is reserved for the journal's own records." },
  invalid_kind: { http: 400, scope: "api", message: "Event kinds match ^[a-z][a-z0-9_.:-]{0,63}$." },
  budget_exceeded: {
    http: 409,
    scope: "api",
    message:
      "The activation's BRAIN_MAX_EMITTED_BYTES budget would be exceeded; the emission was rejected (a refused result also ends its call with this code).",
  },
  unstorable_text: {
    http: 400,
    scope: "api",
    message:
      "The frame carries text Postgres cannot store (a NUL character or an unpaired UTF-16 surrogate); none of it was stored.",
  },
  tool_error: { http: 200, scope: "outcome", message: "The tool's function threw an exception." },
  invalid_input: { http: 200, scope: "outcome", message: "The tool input failed the tool's input schema." },
  invalid_output: {
    http: 200,
    scope: "outcome",
    message: "The tool produced a malformed outcome envelope, output failing its schema, or a non-JSON value.",
  },
  unknown_tool: { http: 200, scope: "outcome", message: "The model asked for a tool this session does not have." },
  setup_failed: {
    http: 200,
    scope: "outcome",
    message: "The Environment could not prepare the tool (loading the component, its grants); not retried.",
  },
  component_trap: { http: 200, scope: "outcome", message: "The component trapped or its run function failed." },
  memory_exceeded: {
    http: 200,
    scope: "outcome",
    message:
      "The component ran out of memory: its linear memory reached BRAIN_COMPONENT_MEMORY_MB, or its thread's heap its limit.",
  },
  cpu_exceeded: {
    http: 200,
    scope: "outcome",
    message: "The component used more CPU time than BRAIN_COMPONENT_CPU_SECONDS allows; it was stopped.",
  },
  result_too_large: {
    http: 200,
    scope: "outcome",
    message: "An Environment's answer to ctx.environments.call exceeds one frame; it was replaced by this error.",
  },
  model_error: { http: 200, scope: "outcome", message: "The model provider failed or answered malformed output." },
  model_auth_failed: { http: 200, scope: "outcome", message: "The model provider refused the session's credentials." },
  model_rate_limited: { http: 200, scope: "outcome", message: "The model provider rate-limited the request." },
  model_bad_request: { http: 200, scope: "outcome", message: "The model provider rejected the request as invalid." },
  model_context_exceeded: {
    http: 200,
    scope: "outcome",
    message: "The conversation does not fit the model's context window.",
  },
  model_unavailable: {
    http: 200,
    scope: "outcome",
    message: "The model provider could not be reached or answered a server error.",
  },
  model_timeout: { http: 200, scope: "outcome", message: "The model provider did not answer within its timeout." },
  model_call_stopped: {
    http: 200,
    scope: "outcome",
    message:
      "A tool's model request was stopped (the tool finished, was interrupted or reached its deadline); its outcome is unknown.",
  },
  model_call_lost: {
    http: 200,
    scope: "outcome",
    message: "The server making the turn's model call was lost; its outcome is unknown and it is not replayed.",
  },
  http_error: {
    http: 200,
    scope: "outcome",
    message: "An HTTP tool or Environment answered a non-2xx status, a malformed body, or could not be reached.",
  },
  mcp_unavailable: {
    http: 502,
    scope: "api",
    message:
      "An MCP server named in mcpServers could not be reached, or its tools/list failed, when the session was created.",
  },
  mcp_tool_not_found: {
    http: 400,
    scope: "api",
    message:
      "mcpServers names a tool (only) that the MCP server's tools/list does not advertise, or whose name no model accepts.",
  },
  mcp_error: {
    http: 200,
    scope: "outcome",
    message:
      "The MCP server could not be reached, refused the call (a JSON-RPC error), or its task failed or was cancelled there.",
  },
  mcp_tool_error: {
    http: 200,
    scope: "outcome",
    message: "The MCP tool answered isError: true; its text content is the message, its content the details.",
  },
  tool_unfinished: {
    http: 200,
    scope: "outcome",
    message: "An HTTP application tool answered its request without finishing the call.",
  },
  egress_denied: {
    http: 403,
    scope: "api",
    message:
      "The target is an address this server does not reach (loopback, private, link-local, metadata, …; BRAIN_EGRESS_ALLOW opens them), or a URL with credentials; nothing was sent. Also a call's error outcome.",
  },
  answer_too_large: {
    http: 200,
    scope: "outcome",
    message: "A model provider or MCP server answered more than BRAIN_MAX_UPSTREAM_BYTES; the rest was not read.",
  },
  not_connected: { http: 0, scope: "sdk", message: "The SDK has no open connection to Brain." },
  connection_closed: { http: 0, scope: "sdk", message: "The connection to Brain closed before an answer arrived." },
  execution_finished: {
    http: 0,
    scope: "sdk",
    message: "The tool execution has finished; emit, emitResult and finish are rejected.",
  },
  invalid_options: { http: 0, scope: "sdk", message: "Tool factory options failed the options schema." },
  unrepresentable_schema: {
    http: 0,
    scope: "sdk",
    message: "A tool's zod schema cannot be represented as JSON Schema.",
  },
  invalid_tool: { http: 0, scope: "sdk", message: "The tool declaration is malformed." },
  tool_mismatch: {
    http: 409,
    scope: "api",
    message:
      "The tools differ from those advertised: reattachment and named-host replicas need exactly the sessions' host tools, with identical advertised schemas.",
  },
  not_available_in_http_tool: {
    http: 0,
    scope: "sdk",
    message: "HTTP application tools get no model calls, arbitrary events or Environment control.",
  },
  request_ended: {
    http: 0,
    scope: "sdk",
    message: "The HTTP tool request has been answered; no work continues beyond its lifetime.",
  },
  request_failed: { http: 0, scope: "sdk", message: "An HTTP request to Brain failed without a Brain error body." },
  turn_cancelled: {
    http: 0,
    scope: "sdk",
    message: "The turn was cancelled (session.cancel()) or its session ended before it answered.",
  },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
export type ErrorScope = (typeof ERROR_CODES)[ErrorCode]["scope"];

export const errorCodes = Object.keys(ERROR_CODES) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CODES, value);
}

/** An error with a stable code; the form every Brain error takes in both processes. */
export class BrainError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;

  constructor(code: ErrorCode, message?: string, details?: unknown) {
    super(message ?? ERROR_CODES[code].message);
    this.name = "BrainError";
    this.code = code;
    this.details = details;
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].http;
  }

  toJSON(): { code: ErrorCode; message: string; details?: unknown } {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}
