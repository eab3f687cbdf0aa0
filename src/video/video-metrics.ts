// The video part's gauges for the metrics endpoint (metrics/video.ts): read from the database and from this
// process's worker and subscriptions when scraped. Registered only while metrics are on.
import type { Services } from '../services/services.js';
import { metricsOn } from '../metrics/registry.js';
import { watchVideo } from '../metrics/video.js';
import { sql } from './video-metrics.sql.js';

export function watchVideoGauges(s: Services, running: () => number, subscribers: () => number): () => void {
  if (!metricsOn) return () => {};
  return watchVideo({
    async tasksByState() {
      const rows = await s.db.query(sql.tasksByState, []);
      const out: Record<string, number> = { pending: 0, running: 0, streaming: 0, cancelling: 0 };
      for (const r of rows) out[String(r.status)] = Number(r.n);
      return out;
    },
    async webhookBacklog() {
      const [r] = await s.db.query(sql.webhookBacklog, []);
      return Number(r?.n ?? 0);
    },
    running,
    subscribers,
  });
}
