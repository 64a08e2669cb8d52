import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";

/** Runs npm in `dir`; resolves with its stdout, rejects with its stderr when it fails. */
function npm(dir: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    // On Windows npm is a .cmd script, which only a shell runs.
    const child = spawn("npm", args, {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
      shell: process.platform === "win32",
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`npm ${args.join(" ")} failed (${code}):\n${err.trim()}`)),
    );
  });
}

interface PackInfo {
  filename: string;
  files: { path: string }[];
}

function parsePack(out: string): PackInfo {
  // Lifecycle scripts may print before npm's JSON; the JSON array is the last thing on stdout.
  const start = out.lastIndexOf("\n[") >= 0 ? out.lastIndexOf("\n[") + 1 : out.indexOf("[");
  const [info] = JSON.parse(out.slice(start)) as PackInfo[];
  if (!info) throw new Error("npm pack printed no package");
  return info;
}

/** The files `npm pack` would put in the tarball (paths relative to the package, with "/"). */
export async function packedFiles(dir: string): Promise<Set<string>> {
  const info = parsePack(await npm(dir, ["pack", "--dry-run", "--json", "--ignore-scripts"]));
  return new Set(info.files.map((f) => f.path));
}

/** `npm pack` itself (lifecycle scripts included); returns the tarball's file name. */
export async function pack(dir: string, destination: string | undefined): Promise<string> {
  // npm pack refuses a destination that does not exist yet.
  if (destination) mkdirSync(destination, { recursive: true });
  const args = ["pack", "--json", ...(destination ? ["--pack-destination", destination] : [])];
  return parsePack(await npm(dir, args)).filename;
}
