/**
 * wasi:filesystem, read-only, over one host directory (the invocation's copy of the session's
 * workspace), preopened as /workspace. Read-only is enforced here, in the bindings: every
 * operation that would change anything answers `read-only`, and opening for write, create or
 * truncate is refused. File modes would not do it (the worker may run as root). Paths are resolved
 * lexically inside the root and never follow symbolic links (the copy contains none, and a
 * component cannot make one).
 */
import { closeSync, lstatSync, openSync, readdirSync, readSync, type Stats } from "node:fs";
import { join } from "node:path";
import { InputStream } from "./wasi-io.js";

/** Where a granted workspace appears inside the component. */
export const WORKSPACE_PREOPEN = "/workspace";

type DescriptorType = "unknown" | "directory" | "regular-file" | "symbolic-link";
type Datetime = { seconds: bigint; nanoseconds: number };
interface DescriptorStat {
  type: DescriptorType;
  linkCount: bigint;
  size: bigint;
  dataAccessTimestamp: Datetime | undefined;
  dataModificationTimestamp: Datetime | undefined;
  statusChangeTimestamp: Datetime | undefined;
}
interface PathFlags {
  symlinkFollow?: boolean;
}
interface OpenFlags {
  create?: boolean;
  directory?: boolean;
  exclusive?: boolean;
  truncate?: boolean;
}
interface DescriptorFlags {
  read?: boolean;
  write?: boolean;
  mutateDirectory?: boolean;
}

/** The wasi error-code for a Node fs error (thrown as a string: jco makes it the `err`). */
function errorCode(error: unknown): string {
  switch ((error as { code?: string }).code) {
    case "ENOENT":
      return "no-entry";
    case "ENOTDIR":
      return "not-directory";
    case "EISDIR":
      return "is-directory";
    case "EACCES":
      return "access";
    case "ENAMETOOLONG":
      return "name-too-long";
    case "ELOOP":
      return "loop";
    default:
      return "io";
  }
}

function fsCall<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw errorCode(error);
  }
}

function typeOf(stats: Stats): DescriptorType {
  if (stats.isDirectory()) return "directory";
  if (stats.isFile()) return "regular-file";
  if (stats.isSymbolicLink()) return "symbolic-link";
  return "unknown";
}

function datetime(ms: number): Datetime {
  return { seconds: BigInt(Math.floor(ms / 1000)), nanoseconds: Math.floor((ms % 1000) * 1_000_000) };
}

function toStat(stats: Stats): DescriptorStat {
  return {
    type: typeOf(stats),
    linkCount: BigInt(stats.nlink),
    size: BigInt(stats.size),
    dataAccessTimestamp: datetime(stats.atimeMs),
    dataModificationTimestamp: datetime(stats.mtimeMs),
    statusChangeTimestamp: datetime(stats.ctimeMs),
  };
}

/** Reads `max` bytes at `position` of a file, opening and closing it: no descriptor outlives a call. */
function readAt(path: string, position: number, max: number): Uint8Array {
  const fd = fsCall(() => openSync(path, "r"));
  try {
    const buffer = new Uint8Array(max);
    const n = fsCall(() => readSync(fd, buffer, 0, max, position));
    return buffer.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

export class DirectoryEntryStream {
  private next = 0;

  constructor(private readonly entries: { type: DescriptorType; name: string }[]) {}

  readDirectoryEntry(): { type: DescriptorType; name: string } | undefined {
    return this.entries[this.next++];
  }
}

function readOnly(): never {
  throw "read-only";
}

/**
 * Everything that would change the workspace answers `read-only`. Defined on the prototype, not
 * as fields: jco may call them on an object it made with Object.create(Descriptor.prototype).
 */
const MUTATIONS = [
  "writeViaStream",
  "appendViaStream",
  "setSize",
  "setTimes",
  "write",
  "createDirectoryAt",
  "setTimesAt",
  "linkAt",
  "removeDirectoryAt",
  "renameAt",
  "symlinkAt",
  "unlinkFileAt",
] as const;

export class Descriptor {
  /** `relative` is "" for the root, else segments joined by "/", never with "." or "..". */
  constructor(
    private readonly root: string,
    private readonly relative: string,
  ) {}

  private get hostPath(): string {
    return this.relative === "" ? this.root : join(this.root, this.relative);
  }

  /** A guest path relative to this descriptor, resolved lexically; it may not leave the root. */
  private resolve(path: string): string {
    if (path.startsWith("/")) throw "not-permitted";
    const segments = this.relative === "" ? [] : this.relative.split("/");
    for (const part of path.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        if (segments.pop() === undefined) throw "not-permitted";
      } else segments.push(part);
    }
    return segments.join("/");
  }

  private lstat(relative = this.relative): Stats {
    return fsCall(() => lstatSync(relative === "" ? this.root : join(this.root, relative)));
  }

  readViaStream(offset: bigint): InputStream {
    if (this.lstat().isDirectory()) throw "is-directory";
    let position = Number(offset);
    const path = this.hostPath;
    return new InputStream({
      read(max) {
        const bytes = readAt(path, position, max);
        if (bytes.length === 0 && max > 0) return null;
        position += bytes.length;
        return bytes;
      },
    });
  }

  advise(): void {}

  /** Nothing is ever written, so there is nothing to sync. */
  syncData(): void {}

  sync(): void {}

  getFlags(): Required<DescriptorFlags> {
    return { read: true, write: false, mutateDirectory: false };
  }

  getType(): DescriptorType {
    return typeOf(this.lstat());
  }

  read(length: bigint, offset: bigint): [Uint8Array, boolean] {
    if (this.lstat().isDirectory()) throw "is-directory";
    const max = Number(length > 1_048_576n ? 1_048_576n : length);
    const bytes = readAt(this.hostPath, Number(offset), max);
    return [bytes, bytes.length < max];
  }

  readDirectory(): DirectoryEntryStream {
    const entries = fsCall(() => readdirSync(this.hostPath, { withFileTypes: true }));
    return new DirectoryEntryStream(
      entries.map((e) => ({
        name: e.name,
        type: e.isDirectory() ? "directory" : e.isFile() ? "regular-file" : "unknown",
      })),
    );
  }

  stat(): DescriptorStat {
    return toStat(this.lstat());
  }

  statAt(_flags: PathFlags, path: string): DescriptorStat {
    return toStat(this.lstat(this.resolve(path)));
  }

  openAt(_flags: PathFlags, path: string, open: OpenFlags, flags: DescriptorFlags): Descriptor {
    if (open.create || open.truncate || flags.write || flags.mutateDirectory) throw "read-only";
    const relative = this.resolve(path);
    const stats = this.lstat(relative);
    if (open.directory && !stats.isDirectory()) throw "not-directory";
    return new Descriptor(this.root, relative);
  }

  readlinkAt(path: string): string {
    if (!this.lstat(this.resolve(path)).isSymbolicLink()) throw "invalid";
    throw "not-permitted";
  }

  isSameObject(other: Descriptor): boolean {
    return other instanceof Descriptor && other.hostPath === this.hostPath;
  }

  metadataHash(): { upper: bigint; lower: bigint } {
    const s = this.lstat();
    return { upper: BigInt(Math.floor(s.mtimeMs * 1000)), lower: BigInt(s.ino) };
  }

  metadataHashAt(_flags: PathFlags, path: string): { upper: bigint; lower: bigint } {
    const s = this.lstat(this.resolve(path));
    return { upper: BigInt(Math.floor(s.mtimeMs * 1000)), lower: BigInt(s.ino) };
  }
}

for (const name of MUTATIONS) Object.defineProperty(Descriptor.prototype, name, { value: readOnly });

/**
 * No grant, no preopen: the component sees no filesystem at all. The directory is read when the
 * component asks, not when it is instantiated: a warm spare is instantiated before its invocation
 * (and its grant) is known.
 */
export function filesystemImports(workspaceDir: () => string | null) {
  return {
    "wasi:filesystem/types": {
      Descriptor,
      DirectoryEntryStream,
      filesystemErrorCode: (): string | undefined => undefined,
    },
    "wasi:filesystem/preopens": {
      getDirectories(): [Descriptor, string][] {
        const dir = workspaceDir();
        return dir === null ? [] : [[new Descriptor(dir, ""), WORKSPACE_PREOPEN]];
      },
    },
  };
}
