// Reading Prometheus exposition text in tests: samples by name and labels, summed over the series a filter picks.
export interface Scraped {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseExposition(text: string): Scraped[] {
  const out: Scraped[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) throw new Error(`unparsed exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of the samples named `name` whose labels include `match`. */
export function sampleSum(samples: Scraped[], name: string, match: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);
}

export async function scrape(port: number, accept?: string): Promise<{ contentType: string; text: string }> {
  const r = await fetch(`http://127.0.0.1:${port}/metrics`, accept ? { headers: { accept } } : {});
  if (r.status !== 200) throw new Error(`metrics scrape: HTTP ${r.status}`);
  return { contentType: r.headers.get('content-type') ?? '', text: await r.text() };
}

/** Prometheus's histogram_quantile: linear interpolation inside the bucket the rank falls in. */
export function histogramQuantile(q: number, buckets: Array<{ le: number; count: number }>): number {
  const bs = [...buckets].sort((a, b) => a.le - b.le);
  const total = bs.at(-1)!.count;
  if (total === 0) return NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of bs) {
    if (b.count >= rank) {
      if (b.le === Infinity) return prevLe;
      return prevLe + (b.le - prevLe) * ((rank - prevCount) / (b.count - prevCount));
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}

/**
 * Sends two requests together (`call` resolves with one request's time in ms) and reads, from the queue-wait
 * histogram of `queue`, how many items that queue started meanwhile and how long they waited in all (ms).
 */
export async function waitedTogether(
  port: number,
  queue: string,
  call: () => Promise<number>,
): Promise<{ items: number; waitedMs: number; took: number[] }> {
  const waits = async () => {
    const m = parseExposition((await scrape(port)).text);
    return {
      s: sampleSum(m, 'sightflow_model_queue_wait_seconds_sum', { model: queue }),
      n: sampleSum(m, 'sightflow_model_queue_wait_seconds_count', { model: queue }),
    };
  };
  const before = await waits();
  const took = await Promise.all([call(), call()]);
  const after = await waits();
  return { items: after.n - before.n, waitedMs: (after.s - before.s) * 1000, took };
}
