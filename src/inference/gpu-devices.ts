// Which NVIDIA GPUs this process uses, as CUDA device ordinals (0..n-1 of the devices CUDA lets it see). A
// host with several cards gets every one of them used: a model's sessions are spread over the cards
// (sessionDevice) and live video decoders take them in turn, so a second card is not left idle while the
// first runs everything. SIGHTFLOW_GPU_DEVICES narrows the set ("0,2"); CUDA_VISIBLE_DEVICES, read by CUDA
// itself, renumbers what is left from 0, so ordinals here count the visible devices.
import { readdirSync } from 'node:fs';

/** What SIGHTFLOW_GPU_DEVICES asked for: every visible device, or these ordinals. */
export type GpuDeviceRequest = 'all' | number[];

export interface GpuDeviceLog {
  warn(obj: object, msg: string): void;
}

/** Parses SIGHTFLOW_GPU_DEVICES: "all" (or unset) or a comma-separated list of device ordinals. Throws on junk. */
export function parseGpuDevices(text: string | undefined): GpuDeviceRequest {
  const t = (text ?? '').trim().toLowerCase();
  if (t === '' || t === 'all') return 'all';
  const out: number[] = [];
  for (const part of t.split(',')) {
    const p = part.trim();
    if (!/^\d{1,3}$/.test(p)) throw new Error(`"${p}" is not a device ordinal (0, 1, ...)`);
    const n = Number(p);
    if (!out.includes(n)) out.push(n);
  }
  return out;
}

/** Where the NVIDIA driver lists its cards, one entry per card, and their device nodes. */
export interface GpuProbePaths {
  procGpus: string;
  dev: string;
}
const HOST_PATHS: GpuProbePaths = { procGpus: '/proc/driver/nvidia/gpus', dev: '/dev' };

/**
 * How many devices CUDA will show this process: the driver's cards (its /proc list and the /dev/nvidiaN
 * nodes, the fewer of the two), narrowed as CUDA narrows them by CUDA_VISIBLE_DEVICES (entries up to the first
 * one that names no device; an empty value hides every device). 0 without a driver.
 */
export function visibleGpuCount(cudaVisibleDevices: string | undefined, paths = HOST_PATHS): number {
  const cards = physicalCards(paths);
  const visible = cudaVisibleDevices;
  if (visible === undefined || cards === 0) return cards;
  let n = 0;
  for (const raw of visible.split(',')) {
    const e = raw.trim();
    if (/^\d+$/.test(e)) {
      if (Number(e) >= cards) break;
    } else if (!/^(GPU|MIG)-/i.test(e)) break;
    n++;
  }
  return Math.min(n, cards);
}

function physicalCards(paths: GpuProbePaths): number {
  const list = (dir: string) => {
    try {
      return readdirSync(dir);
    } catch {
      return undefined;
    }
  };
  const proc = list(paths.procGpus)?.length ?? 0;
  const nodes = (list(paths.dev) ?? []).filter((f) => /^nvidia\d+$/.test(f)).length;
  // A container is given the device nodes of its cards only, while the driver's list may name the host's.
  return proc && nodes ? Math.min(proc, nodes) : proc || nodes;
}

/**
 * The ordinals to use: every visible one, or those asked for that exist (each missing one warned about). Empty
 * when there is no GPU; a GPU provider then runs on device 0 as its library decides.
 */
export function chooseGpuDevices(
  request: GpuDeviceRequest,
  visible: number,
  log?: GpuDeviceLog,
  asker = 'SIGHTFLOW_GPU_DEVICES names',
): number[] {
  const all = Array.from({ length: visible }, (_, i) => i);
  if (request === 'all') return all;
  const missing = request.filter((d) => d >= visible);
  if (missing.length && visible > 0)
    log?.warn(
      { asked: request, visible },
      `${asker} device ${missing.join(', ')} but this process sees ${visible} (ordinals 0-${visible - 1}); ignored`,
    );
  return request.filter((d) => d < visible);
}

/** The device of a model's session `key` (its worker's number): the sessions take the devices in turn. */
export function sessionDevice(devices: readonly number[], key: number): number | undefined {
  return devices.length ? devices[key % devices.length] : undefined;
}
