// `node bench/dist/probes/alloc-summary.js <file.heapprofile> [top] [--per-second R]`: what a process
// allocated while a bench scenario measured (`--alloc-prof`, see alloc-probe.ts). Bytes by
// allocating function and by package, and in all; with the window's length (written beside the
// profile) also per second, and with `--per-second R` (the scenario's rate, e.g. tool calls/s) per
// unit of it. Sampled: each figure is an estimate, good to a few percent at these volumes.
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type CallFrame, endQuietlyOnClosedPipe, frameName, packageOf } from "./profile-frames.js";

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children?: HeapNode[];
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { "per-second": { type: "string" } } });
  const [file, topText] = positionals;
  if (!file) {
    process.stderr.write("usage: node bench/dist/probes/alloc-summary.js <file.heapprofile> [top] [--per-second R]\n");
    process.exit(2);
  }
  const top = Number(topText ?? 25);
  const head = (JSON.parse(readFileSync(file, "utf8")) as { head: HeapNode }).head;
  const fns = new Map<string, number>();
  const pkgs = new Map<string, number>();
  let total = 0;
  const stack = [head];
  while (stack.length > 0) {
    const node = stack.pop()!;
    stack.push(...(node.children ?? []));
    if (node.selfSize === 0) continue;
    total += node.selfSize;
    const pkg = packageOf(node.callFrame);
    fns.set(frameName(node.callFrame, pkg), (fns.get(frameName(node.callFrame, pkg)) ?? 0) + node.selfSize);
    pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + node.selfSize);
  }
  const windowFile = `${file}.window.json`;
  const seconds = existsSync(windowFile)
    ? (JSON.parse(readFileSync(windowFile, "utf8")) as { seconds: number }).seconds
    : 0;
  const rate = values["per-second"] === undefined ? 0 : Number(values["per-second"]);
  const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;
  let line = `${file}: ${mb(total)} allocated`;
  if (seconds > 0) line += ` in ${seconds.toFixed(1)} s, ${mb(total / seconds)}/s`;
  if (seconds > 0 && rate > 0) line += `, ${(total / seconds / rate / 1024).toFixed(1)} KiB per unit at ${rate}/s`;
  const out = process.stdout;
  out.write(`${line}\n\nbytes by package:\n`);
  const pct = (b: number) => `${((100 * b) / total).toFixed(1).padStart(5)}%`;
  for (const [k, b] of [...pkgs].sort((a, c) => c[1] - a[1]).slice(0, top))
    out.write(`${pct(b)} ${mb(b).padStart(9)}  ${k}\n`);
  out.write("\nbytes by allocating function:\n");
  for (const [k, b] of [...fns].sort((a, c) => c[1] - a[1]).slice(0, top))
    out.write(`${pct(b)} ${mb(b).padStart(9)}  ${k}\n`);
}

endQuietlyOnClosedPipe();
main();
