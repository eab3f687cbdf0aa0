// One way to call the server: JSON in and out, bearer credential, and the service's error shape turned into
// an HttpError the pages can branch on (status + code) and show (message).
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  /** The route does not exist on this server (a part of the API not installed or not built yet). */
  get routeMissing(): boolean {
    return this.status === 404 && (this.code === 'route_not_found' || this.code === 'http_404');
  }
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  token: string;
  json?: unknown;
  signal?: AbortSignal;
}

export async function requestJson<T>(url: string, opts: RequestOptions): Promise<T> {
  const res = await send(url, opts, 'application/json');
  const parsed = parseJson(await res.text());
  if (!res.ok) throw httpError(res.status, parsed);
  return parsed as T;
}

/** A binary answer (an image): the bytes as a Blob, or the service's error as an HttpError. */
export async function requestBlob(url: string, opts: RequestOptions): Promise<Blob> {
  const res = await send(url, opts, '*/*');
  if (res.ok) return res.blob();
  throw httpError(res.status, parseJson(await res.text()));
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function httpError(status: number, parsed: unknown): HttpError {
  const err = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
  return new HttpError(status, err?.code ?? `http_${status}`, err?.message ?? `The server answered HTTP ${status}`);
}

async function send(url: string, opts: RequestOptions, accept: string): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${opts.token}`, Accept: accept };
  let body: string | undefined;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  try {
    return await fetch(url, { method: opts.method ?? 'GET', headers, body, signal: opts.signal, cache: 'no-store' });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new HttpError(0, 'network_error', 'The server could not be reached. Is sightflow running?');
  }
}
