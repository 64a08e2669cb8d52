// The seed's inspect tool as a WebAssembly component (componentize-js). Input `{ path }`, options
// `{ depth }`: lists a workspace path to the given depth and finishes with `{ entries }`.
// The workspace is the session's, granted read-only by the Environment as the preopen /workspace.
import { finish, telemetry } from "brain:tool/host@0.2.0";
import { getDirectories } from "wasi:filesystem/preopens@0.2.12";

const WORKSPACE = "/workspace";
const MAX_ENTRIES = 1000;

export function run(invocation) {
  const { path } = JSON.parse(invocation.input);
  const { depth } = JSON.parse(invocation.options);
  const root = getDirectories().find(([, name]) => name === WORKSPACE)?.[0];
  if (!root) return fail("no_workspace", "this tool needs an Environment with filesystem: { workspace: 'read' }");

  const relative = normalise(typeof path === "string" ? path : "");
  if (relative === null) return fail("invalid_path", `${path} is outside the workspace`);
  let stat;
  try {
    stat = relative === "" ? { type: "directory" } : root.statAt({ symlinkFollow: false }, relative);
  } catch (error) {
    return fail("not_found", `${path}: ${code(error)}`);
  }
  const entries = [];
  if (stat.type !== "directory") {
    entries.push(entry(relative, stat));
  } else {
    const dir =
      relative === "" ? root : root.openAt({ symlinkFollow: false }, relative, { directory: true }, { read: true });
    walk(dir, relative, 1, Math.max(1, Number(depth) || 1), entries);
  }
  telemetry("debug", `inspect ${relative || "."}: ${entries.length} entries`);
  finish(JSON.stringify({ status: "ok", value: { entries, truncated: entries.length >= MAX_ENTRIES } }));
}

/** Depth-first, entries sorted by name so the listing is stable. */
function walk(dir, prefix, level, depth, out) {
  const names = [];
  const stream = dir.readDirectory();
  for (let e = stream.readDirectoryEntry(); e !== undefined; e = stream.readDirectoryEntry()) names.push(e);
  names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const { name, type } of names) {
    if (out.length >= MAX_ENTRIES) return;
    const path = prefix === "" ? name : `${prefix}/${name}`;
    const stat = dir.statAt({ symlinkFollow: false }, name);
    out.push(entry(path, { ...stat, type }));
    if (type === "directory" && level < depth) {
      walk(
        dir.openAt({ symlinkFollow: false }, name, { directory: true }, { read: true }),
        path,
        level + 1,
        depth,
        out,
      );
    }
  }
}

function entry(path, stat) {
  return stat.type === "directory"
    ? { path, type: "directory" }
    : { path, type: stat.type === "regular-file" ? "file" : stat.type, size: Number(stat.size) };
}

/** "/workspace/a/./b/" -> "a/b"; null when it climbs out of the workspace. */
function normalise(path) {
  const parts = [];
  const trimmed = path.startsWith(`${WORKSPACE}/`) || path === WORKSPACE ? path.slice(WORKSPACE.length) : path;
  for (const part of trimmed.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.pop() === undefined) return null;
    } else parts.push(part);
  }
  return parts.join("/");
}

function fail(errorCode, message) {
  finish(JSON.stringify({ status: "error", error: { code: errorCode, message } }));
}

function code(error) {
  return typeof error?.payload === "string" ? error.payload : String(error?.message ?? error);
}
