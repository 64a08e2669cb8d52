import { Counter, type Registry } from "prom-client";

/**
 * Counters and histograms kept as plain numbers on the hot path (a map lookup and an array
 * increment, no label hashing) and handed to prom-client's registry only when it is scraped.
 */
export class Tally<L extends string> {
  private readonly counts = new Map<string, { labels: Record<L, string>; n: number }>();

  constructor(options: { name: string; help: string; labelNames?: L[]; registers: Registry[] }) {
    const counts = this.counts;
    new Counter<L>({
      ...options,
      labelNames: options.labelNames ?? [],
      collect() {
        this.reset();
        for (const c of counts.values()) this.inc(c.labels as Partial<Record<L, string>>, c.n);
      },
    });
  }

  /** Adds `n` to the series `key` names; `labels` is called only for a series not seen before. */
  add(key: string, labels: () => Record<L, string>, n = 1): void {
    const c = this.counts.get(key);
    if (c) c.n += n;
    else this.counts.set(key, { labels: labels(), n });
  }
}

interface Series {
  labels: Record<string, string>;
  /** Per bucket (not cumulative), the last one +Inf. */
  buckets: number[];
  sum: number;
  count: number;
}

/** A histogram in the same spirit: observations land in arrays; the exposition is built when scraped. */
export class TallyHistogram<L extends string> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  observe(key: string, labels: () => Record<L, string>, value: number): void {
    let s = this.series.get(key);
    if (!s) {
      s = { labels: labels(), buckets: new Array(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    s.buckets[i]!++;
    s.sum += value;
    s.count++;
  }

  /** What prom-client's registry asks a metric for at a scrape. */
  get(): { name: string; help: string; type: string; aggregator: string; values: unknown[] } {
    const values: unknown[] = [];
    for (const s of this.series.values()) {
      let acc = 0;
      for (const [i, n] of s.buckets.entries()) {
        acc += n;
        const le = i < this.bounds.length ? this.bounds[i]! : "+Inf";
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: acc });
      }
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
