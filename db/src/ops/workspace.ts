import type { Sql } from "postgres";
import { tables } from "../tables.js";

/** A session's workspace files (`workspace_files`), in path order: what a worker materialises. */
export async function readWorkspaceFiles(sql: Sql, sessionId: string): Promise<{ path: string; content: Buffer }[]> {
  const brain = tables(sql);
  return sql<{ path: string; content: Buffer }[]>`
    SELECT path, content FROM ${brain.workspace_files} WHERE session_id = ${sessionId} ORDER BY path`;
}
