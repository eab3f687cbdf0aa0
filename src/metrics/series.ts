// Label sets with plain numbers behind them: the recording side holds a series object and adds to it; the
// family turns every series into Prometheus samples at scrape time (see registry.ts CollectedMetric).
import { collected, type Sample } from './registry.js';

type Labels = Record<string, string>;

/** Upper bounds in seconds for request and inference latencies: 1 ms to 60 s. */
export const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
] as const;
/** Items per inference execution. */
export const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64] as const;

export class HistogramSeries {
  /** Observations per bucket (not cumulative: cumulated when collected). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > b[i]!) i++;
    if (i < b.length) this.counts[i]!++;
    this.sum += v;
    this.count++;
  }

  samples(name: string, labels: Labels, out: Sample[]): void {
    let acc = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      acc += this.counts[i]!;
      out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: this.bounds[i]! }, value: acc });
    }
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: this.count });
    out.push({ metricName: `${name}_sum`, labels, value: this.sum });
    out.push({ metricName: `${name}_count`, labels, value: this.count });
  }
}

/** A histogram by label set; hold the series you record into. */
export class HistogramFamily {
  private readonly series = new Map<string, { labels: Labels; s: HistogramSeries }>();
  constructor(
    readonly name: string,
    help: string,
    private readonly bounds: readonly number[],
  ) {
    collected(name, help, 'histogram', () => {
      const out: Sample[] = [];
      for (const { labels, s } of this.series.values()) s.samples(this.name, labels, out);
      return out;
    });
  }

  get(labels: Labels): HistogramSeries {
    const key = Object.values(labels).join('\u0000');
    let e = this.series.get(key);
    if (!e) this.series.set(key, (e = { labels, s: new HistogramSeries(this.bounds) }));
    return e.s;
  }
}

/** A counter (or gauge set by hand) by label set. */
export class ValueFamily {
  private readonly values = new Map<string, { labels: Labels; v: number }>();
  constructor(
    readonly name: string,
    help: string,
    type: 'counter' | 'gauge' = 'counter',
  ) {
    collected(name, help, type, () => [...this.values.values()].map(({ labels, v }) => ({ labels, value: v })));
  }

  add(labels: Labels, by = 1): void {
    const key = Object.values(labels).join('\u0000');
    const e = this.values.get(key);
    if (e) e.v += by;
    else this.values.set(key, { labels, v: by });
  }

  set(labels: Labels, v: number): void {
    const key = Object.values(labels).join('\u0000');
    const e = this.values.get(key);
    if (e) e.v = v;
    else this.values.set(key, { labels, v });
  }
}
