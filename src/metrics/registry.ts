// The process's Prometheus registry: every metric sightflow exports is registered here, read at scrape time
// and rendered in the Prometheus text format or, when the scraper asks for it, OpenMetrics. Nothing is kept
// until enableMetrics() runs (SIGHTFLOW_METRICS_PORT set): recorders check `metricsOn` first, so a server
// without metrics pays one boolean read where it would record.
import client from 'prom-client';

export const registry = new client.Registry();

/** One value of a metric as prom-client renders it (`metricName` for a histogram's _bucket/_sum/_count). */
export interface Sample {
  labels?: Record<string, string | number>;
  value: number;
  metricName?: string;
}
export type MetricType = 'counter' | 'gauge' | 'histogram';

/** Whether this process keeps metrics. Read by the recorders on their paths; set once at start. */
export let metricsOn = false;
let usageProjectLabel = true;

export function enableMetrics(opts: { projectLabel: boolean }): void {
  usageProjectLabel = opts.projectLabel;
  if (metricsOn) return;
  metricsOn = true;
  // Heap, RSS, CPU, file descriptors, event-loop delay and GC: the library's defaults, under our prefix. The
  // event-loop monitor samples every 50 ms rather than the library's 10: each sample is a timer wake-up, and
  // at 10 ms they cost an idle server 5.9 ms of CPU a second (1.3 at 50 ms; `bench http` prints the idle
  // difference); a delay is still measured in full, only sampled less often.
  client.collectDefaultMetrics({ register: registry, prefix: 'sightflow_', eventLoopMonitoringPrecision: 50 });
  // Gauges named like counters (promtool rejects them); the same numbers by type stay (nodejs_active_handles...).
  for (const name of ['handles', 'requests', 'resources'])
    registry.removeSingleMetric(`sightflow_nodejs_active_${name}_total`);
}

/** Usage counters label by project unless SIGHTFLOW_METRICS_PROJECT_LABEL=false. */
export function projectLabelOn(): boolean {
  return usageProjectLabel;
}

/**
 * A metric whose values are read from plain counters at scrape time: the recording side increments numbers
 * in its own objects (no label lookup, no prom-client call on a request's path) and `collect` turns them
 * into samples.
 */
export class CollectedMetric {
  readonly aggregator = 'sum';
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: MetricType,
    private readonly collect: () => Sample[] | Promise<Sample[]>,
  ) {
    registry.registerMetric(this as never);
  }

  async get(): Promise<{ name: string; help: string; type: MetricType; values: Sample[]; aggregator: string }> {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values: await this.collect(),
      aggregator: this.aggregator,
    };
  }

  reset(): void {}
}

/** Registers a metric read at scrape time; a second registration of the same name keeps the first. */
export function collected(
  name: string,
  help: string,
  type: MetricType,
  collect: () => Sample[] | Promise<Sample[]>,
): void {
  if (registry.getSingleMetric(name)) return;
  new CollectedMetric(name, help, type, collect);
}

const OPENMETRICS = client.Registry.OPENMETRICS_CONTENT_TYPE;

/**
 * The scrape's body in the format the Accept header prefers. prom-client's OpenMetrics rendering renames a
 * counter object in place (it drops `_total` and writes it back per sample), so OpenMetrics renders from a
 * registry of thin views whose names are changed instead of the shared metrics'.
 */
export async function renderMetrics(accept: string | undefined): Promise<{ contentType: string; body: string }> {
  if (accept && /application\/openmetrics-text/i.test(accept)) {
    const om = new client.Registry<typeof OPENMETRICS>();
    om.setContentType(OPENMETRICS);
    for (const m of registry.getMetricsAsArray() as unknown as CollectedMetric[]) {
      const name = m.type === 'counter' ? m.name.replace(/_total$/, '') : m.name;
      om.registerMetric({
        name,
        help: m.help,
        type: m.type,
        aggregator: 'sum',
        reset() {},
        get: async () => ({ ...(await m.get()), name }),
      } as never);
    }
    return { contentType: OPENMETRICS, body: await om.metrics() };
  }
  return { contentType: registry.contentType, body: await registry.metrics() };
}
