/**
 * A tool call, by its session and the sequence of its tool_call_started record: the one way the
 * code names a call. Who reports about it adds itself (`HostCallRef`, `ConnectionCallRef`).
 */
export interface CallKey {
  sessionId: string;
  seq: number;
}
