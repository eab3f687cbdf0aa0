// TypeScript face of native/core/gpu (native/addon/gpu_binding.cc): each NVIDIA card's readings from the
// driver's management library (NVML), as nvidia-smi shows them. The library comes with the driver and is
// opened at run time; a host without one answers `available: false` with the loader's reason.
import { errors } from '../base/errors.js';
import { loadAddon } from './load.js';

/** The management library's file name as the driver installs it (found through the loader's search path). */
export const NVML_LIBRARY = 'libnvidia-ml.so.1';

/** One card, numbered as nvidia-smi numbers them (PCI bus order). A reading the card does not give is absent. */
export interface GpuReading {
  index: number;
  uuid: string;
  name: string;
  /** Why the card could not be read at all (its readings are then absent). */
  error?: string;
  /** 0-1: share of the last sample period in which a kernel ran. */
  utilization?: number;
  memoryUsedBytes?: number;
  memoryTotalBytes?: number;
  /** 0-1: the video decoders (NVDEC). */
  decoderUtilization?: number;
  powerWatts?: number;
  temperatureCelsius?: number;
}

export interface GpuStatus {
  /** False without the library or when it could not start: `reason` says why. */
  available: boolean;
  reason?: string;
  driverVersion?: string;
  devices: GpuReading[];
}

interface GpuAddon {
  gpuStatusAsync?: (library: string) => Promise<GpuStatus>;
}

/** Every card's readings now (on the libuv pool). `library` is a file name or path; the driver's by default. */
export async function gpuStatus(library: string = NVML_LIBRARY): Promise<GpuStatus> {
  if (typeof library !== 'string' || library === '')
    throw errors.invalidParam(
      'library',
      `Expected string of at least 1 character for library but received ${String(library)}`,
    );
  const call = loadAddon<GpuAddon>().gpuStatusAsync;
  // A build from before the readings existed has no such call: the same answer as a host without a driver.
  if (!call) return { available: false, reason: 'this build of the addon has no GPU readings', devices: [] };
  return call(library);
}

/**
 * gpuStatus at most once every `maxAgeMs`, and never two at once: a scrape reads several metrics from one
 * reading, scrapers that come together share it, and a driver that hangs (a card fallen off the bus can hold
 * NVML's calls for seconds) ties up one thread of the pool, not one more at every scrape. A reading that takes
 * longer than `timeoutMs` answers not available, saying so, to every caller until it ends (at once, after the
 * first wait); the next call after it ends reads again.
 */
export function cachedGpuStatus(
  maxAgeMs = 1000,
  library: string = NVML_LIBRARY,
  timeoutMs = 3000,
): () => Promise<GpuStatus> {
  let last: { at: number; status: GpuStatus } | undefined;
  /** The reading under way, bounded by the timeout; shared by every caller until it ends. */
  let answer: Promise<GpuStatus> | undefined;
  return () => {
    if (last && performance.now() - last.at < maxAgeMs) return Promise.resolve(last.status);
    if (!answer) {
      let timer: NodeJS.Timeout | undefined;
      const reading = gpuStatus(library)
        .catch((e: Error): GpuStatus => ({ available: false, reason: e.message, devices: [] }))
        .then((status) => {
          clearTimeout(timer);
          last = { at: performance.now(), status };
          answer = undefined;
          return status;
        });
      const late = new Promise<GpuStatus>((resolve) => {
        timer = setTimeout(
          () => resolve({ available: false, reason: `the driver did not answer in ${timeoutMs} ms`, devices: [] }),
          timeoutMs,
        );
        timer.unref();
      });
      answer = Promise.race([reading, late]);
    }
    return answer;
  };
}
