// The node's NVIDIA cards above the models (GET /admin/v1/gpus), read again every few seconds: what the models'
// sessions have to run on, how busy each card is and how much of its memory is in use. Nothing on a node
// without a driver, where the models run on the CPU.
import { useEffect } from 'preact/hooks';
import type { AdminApi } from '../api/admin-api';
import type { Gpu } from '../api/types';
import { useLoad } from '../use-load';

const REFRESH_MS = 5000;
const gb = (n: number) => (n / 2 ** 30).toFixed(1);
const pct = (x: number) => `${Math.round(x * 100)}%`;

/** "37% busy, 1.0 of 80.0 GB, NVDEC 12%, 41 °C, 123 W" from the readings the card gives. */
export function gpuText(g: Gpu): string {
  if (g.error) return g.error;
  const parts: string[] = [];
  if (g.utilization !== undefined) parts.push(`${pct(g.utilization)} busy`);
  if (g.memory_used_bytes !== undefined && g.memory_total_bytes !== undefined)
    parts.push(`${gb(g.memory_used_bytes)} of ${gb(g.memory_total_bytes)} GB`);
  if (g.decoder_utilization !== undefined) parts.push(`NVDEC ${pct(g.decoder_utilization)}`);
  if (g.temperature_celsius !== undefined) parts.push(`${g.temperature_celsius} °C`);
  if (g.power_watts !== undefined) parts.push(`${Math.round(g.power_watts)} W`);
  return parts.join(', ');
}

export function GpuCards({ api }: { api: AdminApi }) {
  const gpus = useLoad(() => api.gpus(), [api]);
  useEffect(() => {
    const t = setInterval(() => gpus.reload(), REFRESH_MS);
    return () => clearInterval(t);
  }, [gpus.reload]);
  const list = gpus.data;
  if (!list?.available || list.data.length === 0) return null;
  return (
    <section class="panel" aria-label="GPUs on this node">
      <ul class="gpus">
        {list.data.map((g) => (
          <li key={g.uuid || g.index}>
            <strong>
              GPU {g.index} {g.name}
            </strong>
            : {gpuText(g)}
          </li>
        ))}
      </ul>
      {list.driver_version && <p class="muted">Driver {list.driver_version}</p>}
    </section>
  );
}
