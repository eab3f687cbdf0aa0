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
const current = async (): Promise<GpuStatus> => (source ? source() : none);

function per(pick: (d: GpuReading) => number | undefined): () => Promise<Sample[]> {
  return async () => {
    const out: Sample[] = [];
    for (const d of (await current()).devices) {
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
  async () => [{ value: (await current()).devices.length }],
);
collected('sightflow_gpu_info', 'An NVIDIA card: its name and the driver version (value 1)', 'gauge', async () => {
  const s = await current();
  return s.devices.map((d) => ({
    labels: { gpu: d.index, uuid: d.uuid, name: d.name, driver_version: s.driverVersion ?? '' },
    value: 1,
  }));
});

/** Each card's readings: name, help, and the reading (a card without it has no series). */
const READINGS: Array<[string, string, (d: GpuReading) => number | undefined]> = [
  [
    'sightflow_gpu_utilization_ratio',
    "Share of the card's last sample period in which a kernel ran (0-1; nvidia-smi's utilization.gpu)",
    (d) => d.utilization,
  ],
  ['sightflow_gpu_memory_used_bytes', "The card's memory in use, by every process", (d) => d.memoryUsedBytes],
  ['sightflow_gpu_memory_total_bytes', "The card's memory", (d) => d.memoryTotalBytes],
  [
    'sightflow_gpu_decoder_utilization_ratio',
    "Share of the card's last sample period its video decoders (NVDEC) were busy (0-1)",
    (d) => d.decoderUtilization,
  ],
  ['sightflow_gpu_power_watts', "The card's power draw", (d) => d.powerWatts],
  ['sightflow_gpu_temperature_celsius', "The card's core temperature", (d) => d.temperatureCelsius],
];
for (const [name, help, pick] of READINGS) collected(name, help, 'gauge', per(pick));
