// Which ONNX Runtime execution providers run: the requested list (SIGHTFLOW_EXECUTION_PROVIDERS, in order)
// intersected with what this host can load. GPU providers need their provider library next to the
// onnxruntime binding (the CUDA download the project skips by default) and an NVIDIA driver; a GPU
// provider requested where that is missing is dropped with a warning and CPU runs instead.
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface ProviderLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export const KNOWN_PROVIDERS = ['tensorrt', 'cuda', 'cpu'] as const;

const GPU_PROVIDERS = new Set(['cuda', 'tensorrt']);

/** Whether a provider list has a GPU provider in it (a model's sessions then run on a device). */
export function usesGpu(providers: readonly string[]): boolean {
  return providers.some((p) => GPU_PROVIDERS.has(p));
}

/** Provider names parsed from the environment value ("tensorrt,cuda,cpu"); default cpu. */
export function requestedProviders(value: string | undefined): string[] {
  const list = (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  return list.length ? list : ['cpu'];
}

/**
 * The providers as ONNX Runtime's session options take them: a GPU provider with the device it runs on
 * (onnxruntime-node passes `deviceId` to CUDA and TensorRT), the CPU by name.
 */
export function sessionProviders(
  providers: readonly string[],
  device: number | undefined,
): Array<string | { name: string; deviceId: number }> {
  return providers.map((p) => (device !== undefined && GPU_PROVIDERS.has(p) ? { name: p, deviceId: device } : p));
}

const nvidiaDriver = () => existsSync('/proc/driver/nvidia/version') || existsSync('/dev/nvidia0');

/** Providers this host can actually use. cpu is always there. */
export function availableProviders(): string[] {
  const out = ['cpu'];
  const libs = providerLibraries();
  const driver = nvidiaDriver();
  if (driver && libs.some((f) => f.startsWith('libonnxruntime_providers_cuda'))) out.unshift('cuda');
  if (driver && libs.some((f) => f.startsWith('libonnxruntime_providers_tensorrt'))) out.unshift('tensorrt');
  return out;
}

/**
 * What this host lacks for a GPU provider, in words an operator can act on: the driver, or the provider's
 * library, which onnxruntime-node installs only when asked (setup asks for none unless ONNXRUNTIME_NODE_INSTALL
 * says so: docs/operations.md, "On a GPU server").
 */
export function whyUnavailable(provider: string): string {
  if (!nvidiaDriver()) return 'no NVIDIA driver';
  const lib = `libonnxruntime_providers_${provider}`;
  if (!providerLibraries().some((f) => f.startsWith(lib)))
    return provider === 'cuda'
      ? `${lib}.so is not installed beside onnxruntime-node (ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node)`
      : `${lib}.so is not installed beside onnxruntime-node`;
  return 'not offered by this host';
}

function providerLibraries(): string[] {
  try {
    const require = createRequire(import.meta.url);
    const root = dirname(dirname(require.resolve('onnxruntime-node')));
    const dir = join(root, 'bin', 'napi-v6', process.platform, process.arch);
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Requested ∩ available, in the requested order, always ending with cpu so a model whose ops a GPU
 * provider cannot place still runs. Every requested provider that is missing is logged as a warning.
 */
export function chooseProviders(requested: string[], available: string[], log: ProviderLog): string[] {
  const chosen: string[] = [];
  for (const p of requested) {
    if (!(KNOWN_PROVIDERS as readonly string[]).includes(p)) {
      log.warn({ provider: p, known: KNOWN_PROVIDERS }, `unknown execution provider "${p}" ignored`);
    } else if (!available.includes(p)) {
      const why = whyUnavailable(p);
      log.warn(
        { provider: p, available, why },
        `execution provider ${p} requested but not available on this host (${why}); falling back to cpu`,
      );
    } else if (!chosen.includes(p)) {
      chosen.push(p);
    }
  }
  if (!chosen.includes('cpu')) chosen.push('cpu');
  return chosen;
}
