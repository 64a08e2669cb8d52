/**
 * A session's workspace lives in Postgres (`workspace_files`), so a worker needs nothing but the
 * database. For an invocation granted `workspace: "read"`, the worker writes a private snapshot of
 * it to a fresh temporary directory, which the sandbox preopens read-only as /workspace; the
 * directory is removed when the invocation ends. Concurrent invocations never share a copy.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { Sql } from "@aexhq/brain-db/connect";
import { readWorkspaceFiles } from "@aexhq/brain-db/ops";

export interface Workspace {
  dir: string;
  files: number;
  remove(): Promise<void>;
}

export async function materialiseWorkspace(sql: Sql, sessionId: string): Promise<Workspace> {
  const dir = await mkdtemp(join(tmpdir(), "brain-workspace-"));
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    const rows = await readWorkspaceFiles(sql, sessionId);
    for (const { path, content } of rows) {
      const target = resolve(dir, path);
      // The table's CHECK refuses absolute paths and "..": this is the second line of defence.
      if (relative(dir, target).startsWith(`..${sep}`) || target === dir) {
        throw new Error(`workspace path ${JSON.stringify(path)} leaves the workspace`);
      }
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    return { dir, files: rows.length, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
