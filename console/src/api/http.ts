// One way to call the server: JSON in and out, bearer credential, and the service's error shape turned into
// an HttpError the pages can branch on (status + code) and show (message).
export class HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }

  /** The route does not exist on this server (a part of the API not installed or not built yet). */
  get routeMissing(): boolean {
    return this.status === 404 && (this.code === 'route_not_found' || this.code === 'http_404');
  }
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'DELETE';
  token: string;
  json?: unknown;
  signal?: AbortSignal;
}

export async function requestJson<T>(url: string, opts: RequestOptions): Promise<T> {
  const headers: Record<string, string> = { Authorization: `Bearer ${opts.token}`, Accept: 'application/json' };
  let body: string | undefined;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  let res: Response;
  try {
    res = await fetch(url, { method: opts.method ?? 'GET', headers, body, signal: opts.signal, cache: 'no-store' });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new HttpError(0, 'network_error', 'The server could not be reached. Is sightflow running?');
  }
  const text = await res.text();
  let parsed: unknown = undefined;
  try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = undefined; }
  if (!res.ok) {
    const err = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new HttpError(res.status, err?.code ?? `http_${res.status}`, err?.message ?? `The server answered HTTP ${res.status}`);
  }
  return parsed as T;
}
