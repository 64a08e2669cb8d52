// Naming the frames of V8's profiles (CPU and heap) for the summaries: by package (node_modules/<name>,
// Brain's own packages, node internals, GC, idle) and by function.

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

export function packageOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === "") {
    if (functionName === "(idle)") return "(idle)";
    if (functionName === "(garbage collector)") return "(gc)";
    if (functionName === "(program)") return "(program: native, unattributed)";
    return `(native ${functionName || "anonymous"})`;
  }
  const nm = url.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "/node_modules/".length).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith("node:")) return `node:${url.slice(5).split("/")[0]}`;
  const brain = url.match(/\/(server|db|sdk|contracts|worker)\/dist\/(.+)$/);
  if (brain) return `brain/${brain[1]}`;
  return url;
}

/** A frame as one line: function, file:line (from node_modules/ or dist/ on), package. */
export function frameName(frame: CallFrame, pkg = packageOf(frame)): string {
  const where = frame.url ? `${frame.url.replace(/^.*\/(node_modules|dist)\//, "")}:${frame.lineNumber + 1}` : "";
  return `${frame.functionName || "(anonymous)"} ${where} [${pkg}]`;
}

/**
 * A summary piped into `head` (or any reader that stops early) ends quietly: the closed pipe is
 * the reader's choice, not a failure, and Node would otherwise die on the unhandled EPIPE.
 */
export function endQuietlyOnClosedPipe(): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
}
