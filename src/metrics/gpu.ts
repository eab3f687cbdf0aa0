// The NVIDIA cards' readings as gauges, read from the driver's management library at scrape time (what
// nvidia-smi shows: a kernel's share of the time, memory, the video decoders, power, temperature), labelled by
// nvidia-smi's index and the card's UUID. A host without a driver exports none of them; every host exports
// sightflow_gpu_devices (0 there). The readings are the card's, whichever processes use it.
import type { GpuReading, GpuStatus } from '../native/gpu.js';
import { collected, type Sample } from './registry.js';

let source: (() => Promise<GpuStatus>) | undefined;

/** Where the readings come from while metrics are on (app.ts startMetrics); the returned call stops it. */
export function watchGpus(read: () => Promise<GpuStatus>): () => void {
  source = read;
  return () => {
    if (source === read) source = undefined;
  };
}

const none: GpuStatus = { available: false, devices: [] };

function per(pick: (d: GpuReading) => number | undefined): () => Promise<Sample[]> {
  return async () => {
    const s = source ? await source() : none;
    const out: Sample[] = [];
    for (const d of s.devices) {
      const v = pick(d);
      if (v !== undefined) out.push({ labels: { gpu: d.index, uuid: d.uuid }, value: v });
    }
    return out;
  };
}

collected(
  'sightflow_gpu_devices',
  "NVIDIA cards the driver's management library lists (0 without a driver)",
  'gauge',
  async () => [{ value: source ? (await source()).devices.length : 0 }],
);
collected('sightflow_gpu_info', 'An NVIDIA card: its name and the driver version (value 1)', 'gauge', async () => {
  const s = source ? await source() : none;
  return s.devices.map((d) => ({
    labels: { gpu: d.index, uuid: d.uuid, name: d.name, driver_version: s.driverVersion ?? '' },
    value: 1,
  }));
});
collected(
  'sightflow_gpu_utilization_ratio',
  "Share of the card's last sample period in which a kernel ran (0-1; nvidia-smi's utilization.gpu)",
  'gauge',
  per((d) => d.utilization),
);
collected(
  'sightflow_gpu_memory_used_bytes',
  "The card's memory in use, by every process",
  'gauge',
  per((d) => d.memoryUsedBytes),
);
collected(
  'sightflow_gpu_memory_total_bytes',
  "The card's memory",
  'gauge',
  per((d) => d.memoryTotalBytes),
);
collected(
  'sightflow_gpu_decoder_utilization_ratio',
  "Share of the card's last sample period its video decoders (NVDEC) were busy (0-1)",
  'gauge',
  per((d) => d.decoderUtilization),
);
collected(
  'sightflow_gpu_power_watts',
  "The card's power draw",
  'gauge',
  per((d) => d.powerWatts),
);
collected(
  'sightflow_gpu_temperature_celsius',
  "The card's core temperature",
  'gauge',
  per((d) => d.temperatureCelsius),
);
