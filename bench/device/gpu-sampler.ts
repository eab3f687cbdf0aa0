// The card's readings while a row of the GPU check runs (scripts/gpu-check.sh): the driver's management
// library read through the staged server's addon (src/native/gpu.ts) every `everyMs`, summed per row into the
// kernels' mean and highest share of the time, the video decoders' mean and the most memory in use. A card
// busy near 1 under a row is the bound; one well below it says the host (HTTP, decode, the event loop) is.
// Without a driver (the dry run) a row's summary is null.
import { join } from 'node:path';
import { type GpuStatus, gpuStatus } from '../../src/native/gpu.js';
import { useAddonPath } from '../../src/native/load.js';

export interface GpuSummary {
  samples: number;
  utilization_mean: number | null;
  utilization_max: number | null;
  decoder_utilization_mean: number | null;
  memory_used_max_mib: number | null;
}

/** Reads go through the staged server's addon (`server/build/Release/sightflow.node`). */
export function useServerAddon(server: string): void {
  useAddonPath(join(server, 'build', 'Release', 'sightflow.node'));
}

const mean = (xs: number[]) => (xs.length ? +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(3) : null);

/** Card 0's readings from now until `stop()` (a host's first card: the one the check's servers use). */
export function sampleGpu(everyMs = 250): { stop(): Promise<GpuSummary | null> } {
  const readings: GpuStatus[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const s = await gpuStatus().catch(() => null);
      if (!s?.available) return;
      readings.push(s);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      const cards = readings.map((r) => r.devices[0]).filter((d) => d !== undefined);
      if (!cards.length) return null;
      const util = cards.map((d) => d.utilization).filter((x) => x !== undefined);
      const dec = cards.map((d) => d.decoderUtilization).filter((x) => x !== undefined);
      const mem = cards.map((d) => d.memoryUsedBytes).filter((x) => x !== undefined);
      return {
        samples: cards.length,
        utilization_mean: mean(util),
        utilization_max: util.length ? Math.max(...util) : null,
        decoder_utilization_mean: mean(dec),
        memory_used_max_mib: mem.length ? Math.round(Math.max(...mem) / 2 ** 20) : null,
      };
    },
  };
}
