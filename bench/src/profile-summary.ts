// `node bench/dist/profile-summary.js <file.cpuprofile> [top] [--last S]`: where a V8 CPU profile's
// time went. Self time by function, and by package (node_modules/<name>, Brain's own packages, node
// internals, GC, idle), so a profile of the server under a benchmark reads in one screen.
// `--last S`: only the last S seconds before the process began to stop (its final 0.3 s), i.e. a
// scenario's measured window without the setup before it (3 for --quick throughput, 10 in full).
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
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

function packageOf(frame: CallFrame): string {
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

/** Which samples count: all, or those of the last `seconds` before the final 0.3 s. */
function inWindow(profile: Profile, seconds: number | undefined): (i: number) => boolean {
  if (seconds === undefined) return () => true;
  const at: number[] = [];
  let t = profile.startTime;
  for (const d of profile.timeDeltas) {
    t += d;
    at.push(t);
  }
  const end = profile.endTime - 300_000;
  const start = end - seconds * 1e6;
  return (i) => at[i]! >= start && at[i]! <= end;
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { last: { type: "string" } } });
  const [file, topText] = positionals;
  if (!file) {
    process.stderr.write("usage: node bench/dist/profile-summary.js <file.cpuprofile> [top] [--last S]\n");
    process.exit(2);
  }
  const top = Number(topText ?? 25);
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counted = inWindow(profile, values.last === undefined ? undefined : Number(values.last));
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
    const where = frame.url ? `${frame.url.replace(/^.*\/(node_modules|dist)\//, "")}:${frame.lineNumber + 1}` : "";
    const key = `${frame.functionName || "(anonymous)"} ${where} [${pkg}]`;
    fns.set(key, (fns.get(key) ?? 0) + t);
    pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + t);
  }
  const pct = (t: number) => `${((100 * t) / busy).toFixed(1).padStart(5)}%`;
  const ms = (t: number) => `${(t / 1000).toFixed(0).padStart(7)} ms`;
  const out = process.stdout;
  out.write(
    `${file}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy (${((100 * busy) / total).toFixed(0)}%); shares of busy time\n\n`,
  );
  out.write("self time by package:\n");
  for (const [k, t] of [...pkgs].sort((a, b) => b[1] - a[1]).slice(0, top)) out.write(`${pct(t)} ${ms(t)}  ${k}\n`);
  out.write("\nself time by function:\n");
  for (const [k, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) out.write(`${pct(t)} ${ms(t)}  ${k}\n`);
}

main();
