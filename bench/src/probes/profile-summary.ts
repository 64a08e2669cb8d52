// `node bench/dist/probes/profile-summary.js <file.cpuprofile> [top] [--last S | --all]`: where a V8 CPU
// profile's time went. Self time by function, and by package (node_modules/<name>, Brain's own
// packages, node internals, GC, idle), so a profile of the server under a benchmark reads in one
// screen. By default only the scenario's last measured window counts, when the bench wrote it
// beside the profile (`<file>.window.json`, see profileWindow in context.ts); `--all`: the whole
// profile; `--last S`: the last S seconds before the process began to stop (its final 0.3 s).
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type CallFrame, endQuietlyOnClosedPipe, frameName, packageOf } from "./profile-frames.js";

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** A span of the profile's clock (microseconds), or undefined for all of it. */
type Span = { start: number; end: number } | undefined;

/** Which samples count: those inside `span`. */
function inWindow(profile: Profile, span: Span): (i: number) => boolean {
  if (span === undefined) return () => true;
  const at: number[] = [];
  let t = profile.startTime;
  for (const d of profile.timeDeltas) {
    t += d;
    at.push(t);
  }
  return (i) => at[i]! >= span.start && at[i]! <= span.end;
}

/** The span to count: `--last S`, else the bench's window file beside the profile, unless `--all`. */
function spanOf(profile: Profile, file: string, last: string | undefined, all: boolean): Span {
  if (last !== undefined) {
    const end = profile.endTime - 300_000;
    return { start: end - Number(last) * 1e6, end };
  }
  if (all || !existsSync(`${file}.window.json`)) return undefined;
  return JSON.parse(readFileSync(`${file}.window.json`, "utf8")) as Span;
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { last: { type: "string" }, all: { type: "boolean", default: false } },
  });
  const [file, topText] = positionals;
  if (!file) {
    process.stderr.write(
      "usage: node bench/dist/probes/profile-summary.js <file.cpuprofile> [top] [--last S | --all]\n",
    );
    process.exit(2);
  }
  const top = Number(topText ?? 25);
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const span = spanOf(profile, file, values.last, values.all);
  const counted = inWindow(profile, span);
  const self = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) {
    if (counted(i)) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === "(idle)")
    .reduce((a, [, t]) => a + t, 0);
  const busy = total - idle;
  const fns = new Map<string, number>();
  const pkgs = new Map<string, number>();
  for (const [id, t] of self) {
    const frame = byId.get(id)!.callFrame;
    const pkg = packageOf(frame);
    if (pkg === "(idle)") continue;
    const key = frameName(frame, pkg);
    fns.set(key, (fns.get(key) ?? 0) + t);
    pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + t);
  }
  const pct = (t: number) => `${((100 * t) / busy).toFixed(1).padStart(5)}%`;
  const ms = (t: number) => `${(t / 1000).toFixed(0).padStart(7)} ms`;
  const out = process.stdout;
  out.write(
    `${file}${span ? " (measured window)" : ""}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy (${((100 * busy) / total).toFixed(0)}%); shares of busy time\n\n`,
  );
  out.write("self time by package:\n");
  for (const [k, t] of [...pkgs].sort((a, b) => b[1] - a[1]).slice(0, top)) out.write(`${pct(t)} ${ms(t)}  ${k}\n`);
  out.write("\nself time by function:\n");
  for (const [k, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) out.write(`${pct(t)} ${ms(t)}  ${k}\n`);
}

endQuietlyOnClosedPipe();
main();
