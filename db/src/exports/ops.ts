/** @aexhq/brain-db/ops: Every SQL operation, one module each (db/src/ops/). */
export type { CallKey } from "../call-key.js";
export {
  type AppTokenRow,
  activeAppTokenId,
  insertAppToken,
  listAppTokens,
  readAppToken,
  revokeAppToken,
  revokedAmong,
  sessionTokenId,
} from "../ops/app-tokens.js";
export {
  type Appended,
  type AppendGuard,
  type AppendResult,
  type AsWritten,
  appendRecords,
  appendUnchecked,
  type NewCall,
  type NewRecord,
  rel,
  resolveRelative,
  type UncheckedRecord,
} from "../ops/append.js";
export { approveCall, checkApproval, type Decision, denyCall, listApprovals } from "../ops/approvals.js";
export {
  type CallAction,
  type CallRef,
  type ConnectionCallRef,
  emittedBytes,
  endsCall,
  type HostCallRef,
  type TransitionResult,
  transitionCall,
} from "../ops/call-transition.js";
export { type CitusPlacement, citusPlacement } from "../ops/citus-placement.js";
export { componentBytes, componentExists, missingComponents, storeComponent } from "../ops/components.js";
export { consoleCalls } from "../ops/console-calls.js";
export { consoleHosts } from "../ops/console-hosts.js";
export { consoleProcesses } from "../ops/console-processes.js";
export { consoleSessions } from "../ops/console-sessions.js";
export { closeServerConnections, declareDeadServers } from "../ops/dead-servers.js";
export {
  type ClaimedWorkerCall,
  claimPendingCalls,
  claimWorkerCall,
  type DispatchedCall,
} from "../ops/dispatch.js";
export { type Durability, durability, meaningOf } from "../ops/durability.js";
export { type EndCallsFilter, type EndedCall, endCalls, endOverdueCalls, timeOutCall } from "../ops/end-calls.js";
export {
  ENVIRONMENT_OPERATION_KIND,
  type EnvironmentOperationResult,
  type EnvironmentOperationWrite,
  journalEnvironmentOperation,
} from "../ops/environment-operation.js";
export { attemptEnvironmentSetup, type SetupAttempt, type SetupVerdict } from "../ops/environment-setup.js";
export {
  deleteEnvironment,
  type EnvironmentCallContext,
  type EnvironmentConfig,
  type EnvironmentRow,
  type EnvironmentStatus,
  environmentCallContext,
  insertEnvironment,
  listEnvironments,
  lockEnvironment,
  MAX_SESSION_ENVIRONMENTS,
  type NewEnvironment,
  readEnvironment,
  replaceEnvironment,
  type StoredEnvironment,
} from "../ops/environments.js";
export { type ForkSpec, forkSession, sessionSecrets } from "../ops/fork-session.js";
export { closeConnection, hostAuth, hostExists, insertHost, openConnection } from "../ops/hosts.js";
export { type Remembered, recall, remember, sha256 } from "../ops/idempotency.js";
export {
  type DroppedWeek,
  dropJournalWeek,
  ensureJournalPartitions,
  PARTITION_WEEKS_AHEAD,
} from "../ops/journal-partitions.js";
export { journalsBehind } from "../ops/journals-behind.js";
export {
  type CallAnswer,
  getMcpTask,
  listMcpTasks,
  type McpCallState,
  type McpSession,
  type McpTaskRow,
  mcpCallState,
  mcpSession,
  type NewMcpTask,
  withMcpTask,
} from "../ops/mcp-tasks.js";
export { claimNamedCalls, type NamedClaimOptions } from "../ops/named-host-claims.js";
export {
  closeReplicaConnection,
  insertReplica,
  openReplicaConnection,
  replicaAuth,
  sessionNamedHosts,
} from "../ops/named-hosts.js";
export { openTurn } from "../ops/open-turn.js";
export {
  type CallRow,
  databaseFacts,
  listCalls,
  listenNotifyDelivered,
  liveProcesses,
  type ProcessRow,
} from "../ops/operator.js";
export {
  type Claim,
  type ClaimedSession,
  claimParkedSessions,
  claimSession,
  type Judgement,
  markParked,
  NO_JUDGEMENT,
  orphanedSessions,
  parkedSessionsAhead,
  SERVER_STALE_SECONDS,
  sessionOwner,
} from "../ops/ownership.js";
export {
  chargeComponent,
  chargedForComponent,
  checkQuota,
  type QuotaName,
  quotaExceeded,
  readTokenQuotas,
  setTokenQuotas,
  type TokenQuotas,
  tokenUsage,
} from "../ops/quotas.js";
export { type RecordPage, readRecordPage } from "../ops/record-page.js";
export {
  callExists,
  callState,
  endedAmong,
  type RecordRow,
  readRecords,
  type TurnState,
  turnState,
} from "../ops/records.js";
export { type RefusedEmission, refuseEmission, refuseEmissionIn } from "../ops/refuse-emission.js";
export { type ReplicaLag, replicaLag } from "../ops/replica-lag.js";
export { type Resealed, resealSecrets, secretsByKey } from "../ops/reseal.js";
export {
  MCP_TASK_KIND,
  type ReleaseFilter,
  recordResumePoint,
  releaseResumableCalls,
} from "../ops/resume-calls.js";
export {
  IDEMPOTENCY_KEEP_SECONDS,
  PRUNE_BATCH,
  PRUNE_RECORDS_BATCH,
  type PruneCounts,
  type PruneOptions,
  prune,
} from "../ops/retention.js";
export {
  appliedSchemaVersion,
  expectedSchemaVersion,
  type SchemaVersions,
  schemaVersions,
} from "../ops/schema-version.js";
export { environmentSecret, MODEL_SECRET, mcpSecret, readModel, readSecret, secretAad } from "../ops/secrets.js";
export { heartbeat, liveServerUrl, registerServer, setServerUrl, stopServer } from "../ops/servers.js";
export { newSessionId } from "../ops/session-id.js";
export { type SessionEnd, sessionSeqs } from "../ops/session-seqs.js";
export {
  createSession,
  deleteSession,
  type EndResult,
  endSession,
  getSession,
  listSessions,
  type NewSession,
  type SessionCursor,
  type SessionPage,
  type SessionRow,
  sealedRows,
  sessionStatus,
} from "../ops/sessions.js";
export {
  endOrphanedToolModelCalls,
  endToolModelCall,
  modelGranted,
  type StartedToolModelCall,
  startToolModelCall,
} from "../ops/tool-model-calls.js";
export {
  advanceTraceCursors,
  observedCalls,
  openStarts,
  type TraceBacklog,
  TraceLease,
  type TraceRecord,
  traceBacklog,
  traceContext,
  traceRecordsAfter,
} from "../ops/trace-export.js";
export { heartbeatAlive } from "../ops/worker-heartbeat.js";
export { readWorkspaceFiles } from "../ops/workspace.js";
