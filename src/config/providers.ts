// Video provider lists as configured: SIGHTFLOW_PROVIDERS (the default list) and SIGHTFLOW_PROVIDERS_<NAME>
// (the list for requests whose `model` routing hint is <name>). Parsed with the rest of the configuration so
// a malformed list stops the start with a message naming the variable; src/video/worker/provider-lists.ts turns the
// parsed specs into provider objects.
//
// A list is either comma-separated entries, each `local` or `<base URL>#<API key of that node>`:
//   SIGHTFLOW_PROVIDERS=local,https://gpu-2:8080#sk_sf_...
// or a JSON array of `"local"` / {"type": "local"} / {"url", "key", "name"?, "timeout_ms"?} entries:
//   SIGHTFLOW_PROVIDERS='[{"url":"https://gpu-2:8080","key":"sk_sf_...","timeout_ms":30000},"local"]'
// The hint's variable is the hint upper-cased, every character other than A-Z and 0-9 turned into "_"
// ("gpu-fast" -> SIGHTFLOW_PROVIDERS_GPU_FAST); a hint with no such variable uses the default list.

export type ProviderSpec =
  | { type: 'local' }
  | { type: 'remote'; url: string; key: string; name?: string; timeoutMs?: number };

export const PROVIDERS_HINT_PREFIX = 'SIGHTFLOW_PROVIDERS_';

function remote(
  variable: string,
  url: string,
  key: string,
  extra: { name?: string; timeoutMs?: number } = {},
): ProviderSpec {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`${variable}: ${JSON.stringify(url)} is neither "local" nor an http(s) URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new Error(`${variable}: ${JSON.stringify(url)} is not an http(s) URL`);
  if (!key)
    throw new Error(`${variable}: ${u.origin} has no API key (write it after "#", or as "key" in the JSON form)`);
  return { type: 'remote', url: `${u.origin}${u.pathname.replace(/\/+$/, '')}`, key, ...extra };
}

/** Parses one list (the comma form or the JSON form); the error names `variable`. */
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
      if (e === 'local' || (typeof e === 'object' && e !== null && (e as { type?: unknown }).type === 'local'))
        return { type: 'local' };
      if (typeof e !== 'object' || e === null || typeof (e as { url?: unknown }).url !== 'string') {
        throw new Error(`${variable}[${i}]: expected "local" or {"url": ..., "key": ...}`);
      }
      const o = e as { url: string; key?: unknown; name?: unknown; timeout_ms?: unknown };
      const timeoutMs = o.timeout_ms === undefined ? undefined : Number(o.timeout_ms);
      if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0))
        throw new Error(`${variable}[${i}].timeout_ms: expected a positive integer`);
      return remote(`${variable}[${i}]`, o.url, typeof o.key === 'string' ? o.key : '', {
        ...(typeof o.name === 'string' ? { name: o.name } : {}),
        ...(timeoutMs ? { timeoutMs } : {}),
      });
    });
  } else {
    specs = t
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((entry): ProviderSpec => {
        if (entry.toLowerCase() === 'local') return { type: 'local' };
        const hash = entry.indexOf('#');
        return hash < 0
          ? remote(variable, entry, '')
          : remote(variable, entry.slice(0, hash), decodeURIComponent(entry.slice(hash + 1)));
      });
  }
  if (specs.length === 0) throw new Error(`${variable}: the provider list is empty`);
  return specs;
}

/** The variable that holds the list for a routing hint. */
export function hintVariable(model: string): string {
  return `${PROVIDERS_HINT_PREFIX}${model.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}
