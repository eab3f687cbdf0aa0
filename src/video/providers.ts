// The ordered provider lists a worker runs tasks through (before the first chunk a provider failure moves
// on to the next provider, up to 2 retries).
//
// Configuration (environment):
//   SIGHTFLOW_PROVIDERS           the default list; default "local".
//   SIGHTFLOW_PROVIDERS_<NAME>    the list for requests whose `model` routing hint is <name> (upper-cased,
//                                 every character other than A-Z and 0-9 becomes "_": "gpu-fast" ->
//                                 SIGHTFLOW_PROVIDERS_GPU_FAST). A hint with no such variable uses the default.
//   SIGHTFLOW_PROVIDER_TIMEOUT_MS time a remote provider has to deliver its first frame; default 60000.
// A list is either comma-separated entries, each `local` or `<base URL>#<API key of that node>`:
//   SIGHTFLOW_PROVIDERS=local,https://gpu-2:8080#sk_sf_...
// or a JSON array of `"local"` / {"type": "local"} / {"url", "key", "name"?, "timeout_ms"?} entries:
//   SIGHTFLOW_PROVIDERS='[{"url":"https://gpu-2:8080","key":"sk_sf_...","timeout_ms":30000},"local"]'
// "local" runs in this process (LocalProvider); a URL is another sightflow node (RemoteProvider). A malformed
// list fails at start with a message naming the variable.
import type { Services } from '../services.js';
import { LocalProvider } from './pipeline/local-provider.js';
import { RemoteProvider } from './pipeline/remote-provider.js';
import type { VideoProvider } from './provider.js';

export type ProviderSpec = { type: 'local' } | { type: 'remote'; url: string; key: string; name?: string; timeoutMs?: number };

function remote(variable: string, url: string, key: string, extra: { name?: string; timeoutMs?: number } = {}): ProviderSpec {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`${variable}: ${JSON.stringify(url)} is neither "local" nor an http(s) URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${variable}: ${JSON.stringify(url)} is not an http(s) URL`);
  if (!key) throw new Error(`${variable}: ${u.origin} has no API key (write it after "#", or as "key" in the JSON form)`);
  return { type: 'remote', url: `${u.origin}${u.pathname.replace(/\/+$/, '')}`, key, ...extra };
}

/** Parses one list (the comma form or the JSON form). */
export function parseProviderList(text: string, variable = 'SIGHTFLOW_PROVIDERS'): ProviderSpec[] {
  const t = text.trim();
  let specs: ProviderSpec[];
  if (t.startsWith('[')) {
    let raw: unknown;
    try {
      raw = JSON.parse(t);
    } catch (e) {
      throw new Error(`${variable}: invalid JSON: ${(e as Error).message}`);
    }
    if (!Array.isArray(raw)) throw new Error(`${variable}: expected a JSON array`);
    specs = raw.map((e, i): ProviderSpec => {
      if (e === 'local' || (typeof e === 'object' && e !== null && (e as { type?: unknown }).type === 'local')) return { type: 'local' };
      if (typeof e !== 'object' || e === null || typeof (e as { url?: unknown }).url !== 'string') {
        throw new Error(`${variable}[${i}]: expected "local" or {"url": ..., "key": ...}`);
      }
      const o = e as { url: string; key?: unknown; name?: unknown; timeout_ms?: unknown };
      const timeoutMs = o.timeout_ms === undefined ? undefined : Number(o.timeout_ms);
      if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) throw new Error(`${variable}[${i}].timeout_ms: expected a positive integer`);
      return remote(`${variable}[${i}]`, o.url, typeof o.key === 'string' ? o.key : '', {
        ...(typeof o.name === 'string' ? { name: o.name } : {}), ...(timeoutMs ? { timeoutMs } : {}),
      });
    });
  } else {
    specs = t.split(',').map((s) => s.trim()).filter(Boolean).map((entry): ProviderSpec => {
      if (entry.toLowerCase() === 'local') return { type: 'local' };
      const hash = entry.indexOf('#');
      return hash < 0 ? remote(variable, entry, '') : remote(variable, entry.slice(0, hash), decodeURIComponent(entry.slice(hash + 1)));
    });
  }
  if (specs.length === 0) throw new Error(`${variable}: the provider list is empty`);
  return specs;
}

/** The variable that holds the list for a routing hint. */
export function hintVariable(model: string): string {
  return `SIGHTFLOW_PROVIDERS_${model.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

export function createProviders(s: Pick<Services, 'config' | 'models'>, env: NodeJS.ProcessEnv = process.env): { forModel(model?: string): VideoProvider[] } {
  const timeout = env.SIGHTFLOW_PROVIDER_TIMEOUT_MS ? Number(env.SIGHTFLOW_PROVIDER_TIMEOUT_MS) : 60000;
  if (!(Number.isInteger(timeout) && timeout > 0)) throw new Error('SIGHTFLOW_PROVIDER_TIMEOUT_MS: expected a positive integer (milliseconds)');
  const local = LocalProvider.fromServices(s);
  const build = (specs: ProviderSpec[]): VideoProvider[] => specs.map((p) => (p.type === 'local' ? local
    : new RemoteProvider({ url: p.url, key: p.key, name: p.name, firstFrameTimeoutMs: p.timeoutMs ?? timeout })));
  const defaults = build(parseProviderList(env.SIGHTFLOW_PROVIDERS?.trim() ? env.SIGHTFLOW_PROVIDERS : 'local'));
  // Every list is parsed now, so a typo fails at start rather than on the first task that uses the hint.
  const byHint = new Map<string, VideoProvider[]>();
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith('SIGHTFLOW_PROVIDERS_') && v?.trim()) byHint.set(k, build(parseProviderList(v, k)));
  }
  return {
    forModel(model?: string): VideoProvider[] {
      if (model) {
        const list = byHint.get(hintVariable(model));
        if (list) return [...list];
      }
      return [...defaults];
    },
  };
}
