import type { Sql } from "postgres";

/** A session's workspace files (`workspace_files`), in path order: what a worker materialises. */
export async function readWorkspaceFiles(sql: Sql, sessionId: string): Promise<{ path: string; content: Buffer }[]> {
  return sql<{ path: string; content: Buffer }[]>`
    SELECT path, content FROM workspace_files WHERE session_id = ${sessionId} ORDER BY path`;
}
