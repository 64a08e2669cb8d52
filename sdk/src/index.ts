// Every export of this file is public API of @aexhq/brain: each name is listed explicitly, and
// anything not exported here is internal and may change without notice.

export { Brain, type BrainOptions } from "./brain.js";
export { Component, component } from "./component.js";
export type { EnvironmentControl, ResultOptions, ToolContext } from "./context.js";
// The journal's record kinds, typed: `payloadOf(event, "tool_call_ended")` reads an event's payload
// as its kind's (null for another kind), with the schemas Brain writes every record with.
export type {
  AppToken,
  BrainRecord,
  BrainRecordKind,
  BrainRecordOf,
  CreatedToken,
  EnvironmentControl as EnvironmentControlPolicy,
  EnvironmentView,
  ErrorCode,
  ErrorOutcome,
  JournalEvent,
  ModelConfig,
  ModelMessage,
  ModelRequest,
  ModelResult,
  ModelTool,
  ModelToolCall,
  OkOutcome,
  Outcome,
  OutcomeStatus,
  RecordPayload,
  ScriptStep,
  TokenQuotas,
  ToolError,
  ToolPlacement,
} from "./contracts.js";
export { BrainError, ERROR_CODES, payloadOf } from "./contracts.js";
export {
  type BrainEnvironment,
  brainEnv,
  type HostEnvironment,
  type HttpEnvironment,
  type HttpEnvironmentOptions,
  hostEnv,
  http,
  httpEnv,
} from "./environment.js";
export type { BrainCredentials } from "./host-connection.js";
export type { Hosts, ServedHost, ServeOptions } from "./hosts.js";
export { type FastifyToolsInstance, type FastifyToolsOptions, fastifyTools } from "./http-tools/fastify.js";
export { type HttpToolDefinition, httpTool } from "./http-tools/http-tool.js";
export { type ToolHandlerOptions, type ToolRequestListener, toolHandler } from "./http-tools/node-handler.js";
export type { JsonSchema } from "./json-schema.js";
export {
  type McpEnvironment,
  type McpEnvironmentOptions,
  type McpTools,
  type McpToolsOptions,
  mcpEnv,
  mcpTools,
} from "./mcp.js";
export { type EventsOptions, type RequestOptions, type SendOptions, Session, type SessionInfo } from "./session.js";
export type {
  CreateSessionParams,
  ForkOptions,
  GetSessionOptions,
  ListSessionsOptions,
  ReplayOptions,
  SessionPage,
  Sessions,
} from "./sessions.js";
export type { TurnStreamPart } from "./stream-turn.js";
export type { Tokens } from "./tokens.js";
export {
  type FactoryOptions,
  type PlacedTool,
  type Tool,
  type ToolDefinition,
  type ToolOptions,
  type ToolReturn,
  type ToolValue,
  tool,
} from "./tool.js";
