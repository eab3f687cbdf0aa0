// Vector search metrics: the index search itself by plan (graph: the HNSW walk; exact: a scan of the few
// items a filter matches; filtered: the graph walk with the filter inside), timed around the synchronous
// USearch call, and at scrape time the items in this process's indexes and how many collection changes they
// have yet to catch up on. End-to-end search latency is the route's (sightflow_http_request_duration_seconds).
import { performance } from 'node:perf_hooks';
import { collected, metricsOn, type Sample } from './registry.js';
import { HistogramFamily, LATENCY_BUCKETS } from './series.js';

export type SearchPlan = 'graph' | 'exact' | 'filtered';

const searches = new HistogramFamily(
  'sightflow_vector_index_search_seconds',
  'Vector index searches by plan (graph, exact, filtered) and the time of the index search itself',
  LATENCY_BUCKETS,
);

/** Records a search that started at `startedMs` (performance.now()). */
export function observeVectorSearch(plan: SearchPlan, startedMs: number): void {
  if (metricsOn) searches.get({ plan }).observe((performance.now() - startedMs) / 1000);
}

export interface VectorGauges {
  stats(): Promise<{ items: number; behind: number }>;
}
let sources: VectorGauges[] = [];
export function watchVectors(g: VectorGauges): () => void {
  sources.push(g);
  return () => {
    sources = sources.filter((x) => x !== g);
  };
}

async function sum(pick: 'items' | 'behind'): Promise<Sample[]> {
  let n = 0;
  for (const g of sources) n += (await g.stats())[pick];
  return sources.length ? [{ value: n }] : [];
}
collected(
  'sightflow_vector_items',
  'Items in the vector indexes this process has loaded (all collections together)',
  'gauge',
  () => sum('items'),
);
collected(
  'sightflow_vector_index_changes_behind',
  "Collection changes (adds, deletes) the database has that this process's indexes have not applied yet; they catch up on the next search or write",
  'gauge',
  () => sum('behind'),
);
