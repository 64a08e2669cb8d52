// A small reader of the Prometheus text exposition format (what GET /metrics answers), for tests:
// every sample line `name{label="value",…} number`, comments and types skipped.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? "").matchAll(LABEL)) {
      labels[k!] = v!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
    }
    const raw = m[3]!;
    const value = raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw);
    // prom-client writes NaN as "Nan".
    if (Number.isNaN(value) && raw.toLowerCase() !== "nan") throw new Error(`not a sample value: ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  return samples;
}

/**
 * The value of the one sample named `name` whose labels include `labels`; 0 when there is none
 * (a counter not yet incremented is absent), and an error when several match.
 */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}

/** Every sample named `name` (all its label sets). */
export function samplesOf(samples: Sample[], name: string): Sample[] {
  return samples.filter((s) => s.name === name);
}
