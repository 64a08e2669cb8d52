import type { Segments } from "./journal.js";
import { type Figure, latency, percentile, value } from "./stats.js";

/**
 * One latency figure per segment of a turn, named `<scenario> · <segment>`; a segment whose two
 * records were committed together is marked "(same commit)" and is not a step of its own. Then the
 * number of commits on a turn's path (distinct xmin of its records, median).
 */
export function segmentFigures(scenario: string, s: Segments): Figure[] {
  const figures: Figure[] = [...s.segments].map(([name, samples]) => {
    const same = s.sameCommit.has(name);
    return latency(`${scenario} · ${name}${same ? " (same commit)" : ""}`, samples, {
      note: "segment of the turn, from journal created_at and host clocks",
    });
  });
  const sorted = [...s.commitsPerTurn].sort((a, b) => a - b);
  if (sorted.length > 0) {
    figures.push(
      value(`${scenario}.commits`, "commits/turn", sorted.length, percentile(sorted, 50), {
        note: "median number of transactions that wrote a turn's records (distinct xmin)",
      }),
    );
  }
  return figures;
}

export function problemsNote(problems: string[], anomalies: string[]): string | undefined {
  const all = [...anomalies, ...problems];
  return all.length === 0 ? undefined : `ANOMALIES: ${all.slice(0, 5).join("; ")}`;
}
