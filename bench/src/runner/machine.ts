import { execFileSync } from "node:child_process";
import { cpus, totalmem } from "node:os";

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryMiB: number;
  node: string;
  platform: string;
  gitCommit: string;
  gitDirty: boolean;
}

export function machineInfo(root: string): MachineInfo {
  const git = (...args: string[]) => {
    try {
      return execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      return "";
    }
  };
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    memoryMiB: Math.round(totalmem() / 1024 / 1024),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    gitCommit: git("rev-parse", "HEAD") || "unknown",
    gitDirty: git("status", "--porcelain") !== "",
  };
}
