/**
 * Applies unified diffs (`diff -u`, `git diff`) to files held in memory, strictly: every hunk's
 * context and removed lines must stand exactly where the hunk says (shifted only by the hunks
 * before it in the same file), so a patch written for one version of a file never lands on
 * another. Text before a file's `---` line is commentary and ignored, as patch(1) does.
 */

export interface FilePatch {
  /** The path after `b/`, e.g. `src/connection.js`. */
  path: string;
  hunks: Hunk[];
}

interface Hunk {
  /** 1-based line of the old file where the hunk starts. */
  oldStart: number;
  lines: string[];
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@/;

export function parseUnifiedDiff(text: string): FilePatch[] {
  const files: FilePatch[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const next = lines[i + 1];
    if (!lines[i]!.startsWith("--- ") || !next?.startsWith("+++ ")) continue;
    const path = next.slice(4).split("\t")[0]!.replace(/^b\//, "");
    const file: FilePatch = { path, hunks: [] };
    files.push(file);
    i += 2;
    for (; i < lines.length; i++) {
      const header = HUNK.exec(lines[i]!);
      if (!header) break;
      const hunk: Hunk = { oldStart: Number(header[1]), lines: [] };
      while (i + 1 < lines.length && /^[ +\-\\]/.test(lines[i + 1]!) && !lines[i + 1]!.startsWith("--- ")) {
        i++;
        if (!lines[i]!.startsWith("\\")) hunk.lines.push(lines[i]!);
      }
      file.hunks.push(hunk);
    }
    i--;
  }
  return files;
}

/** The file's text with the patch applied; throws naming the hunk that does not fit. */
export function applyFilePatch(source: string, patch: FilePatch): string {
  const lines = source.split("\n");
  let offset = 0;
  for (const hunk of patch.hunks) {
    const before = hunk.lines.filter((l) => !l.startsWith("+")).map((l) => l.slice(1));
    const after = hunk.lines.filter((l) => !l.startsWith("-")).map((l) => l.slice(1));
    const at = hunk.oldStart - 1 + offset;
    const found = lines.slice(at, at + before.length);
    if (found.length !== before.length || found.some((l, k) => l !== before[k])) {
      throw new Error(`${patch.path}: the hunk at line ${hunk.oldStart} does not fit`);
    }
    lines.splice(at, before.length, ...after);
    offset += after.length - before.length;
  }
  return lines.join("\n");
}
