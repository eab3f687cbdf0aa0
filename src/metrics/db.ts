// The PostgreSQL connection pool as gauges (PGlite, in process, has no pool and reports none).
import { collected, type Sample } from './registry.js';

type PoolStats = { max: number; total: number; idle: number; waiting: number } | null;
let sources: Array<() => PoolStats> = [];
export function watchDbPool(read: () => PoolStats): () => void {
  sources.push(read);
  return () => {
    sources = sources.filter((f) => f !== read);
  };
}

function read(pick: (p: NonNullable<PoolStats>) => Sample[]): () => Sample[] {
  return () =>
    sources
      .map((f) => f())
      .filter((p): p is NonNullable<PoolStats> => p !== null)
      .flatMap(pick);
}
collected(
  'sightflow_db_pool_connections',
  'PostgreSQL pool connections by state (idle, busy)',
  'gauge',
  read((p) => [
    { labels: { state: 'idle' }, value: p.idle },
    { labels: { state: 'busy' }, value: p.total - p.idle },
  ]),
);
collected(
  'sightflow_db_pool_max',
  'Most connections the PostgreSQL pool opens (SIGHTFLOW_PG_POOL_SIZE)',
  'gauge',
  read((p) => [{ value: p.max }]),
);
collected(
  'sightflow_db_pool_waiting',
  'Queries waiting for a free PostgreSQL pool connection',
  'gauge',
  read((p) => [{ value: p.waiting }]),
);
