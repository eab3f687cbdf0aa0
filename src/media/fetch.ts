// Server-side fetch of an image (or, for vector items, audio) URL: one deadline for the whole exchange, a byte cap enforced while the body
// streams, redirects followed by hand, each hop judged by checkUrl. node:http rather than fetch, because only a
// custom socket lookup pins the connection to the addresses checkUrl vetted (and the peer is checked again).
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { ApiError, errors, type FetchedMedia } from '../base/errors.js';
import { addressRefusal, checkUrl, urlDenied, type Resolver, type UrlPolicy } from './url-policy.js';

export interface FetchMediaOptions extends UrlPolicy {
  /** Request parameter named in errors ("image", "items[2].image"). */
  param: string;
  /** What the URL should hold; words the errors and the Accept header. Default 'image'. */
  media?: FetchedMedia;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  signal?: AbortSignal;
  /** DNS seam for tests; default the system resolver. */
  resolve?: Resolver;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ACCEPT: Record<FetchedMedia, string> = {
  image: 'image/jpeg, image/png, image/webp, */*;q=0.1',
  audio: 'audio/wav, audio/mpeg, audio/flac, audio/ogg, */*;q=0.1',
  video: 'video/mp4, video/webm, video/*, */*;q=0.1',
  model: 'application/octet-stream, */*;q=0.1',
};

/** The body of `url` (after at most `maxRedirects` redirects), or an ApiError naming what went wrong. */
export async function fetchMediaBytes(url: URL, opts: FetchMediaOptions): Promise<Buffer> {
  opts.signal?.throwIfAborted();
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), opts.timeoutMs);
  const onClientAbort = () => deadline.abort();
  opts.signal?.addEventListener('abort', onClientAbort, { once: true });
  try {
    const { res, url: current } = await openMediaResponse(url, { ...opts, signal: deadline.signal });
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > opts.maxBytes) {
      res.destroy();
      throw errors.payloadTooLarge(opts.media ?? 'image', opts.maxBytes);
    }
    return await readCapped(res, opts.maxBytes, current, opts.param, opts.media);
  } catch (e) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (deadline.signal.aborted)
      throw errors.imageFetchFailed(opts.param, `no complete answer within ${opts.timeoutMs} ms`, opts.media);
    throw e;
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onClientAbort);
  }
}

export interface OpenResponseOptions extends UrlPolicy {
  param: string;
  media?: FetchedMedia;
  maxRedirects: number;
  /** Stops everything (resolution, connection, body); the caller tells deadline from client abort. */
  signal: AbortSignal;
  resolve?: Resolver;
  /** Byte range to ask for: [start, end) with end -1 or absent for "to the end". */
  range?: { start: number; end?: number };
  /** Sees every hop's response head, redirects included (a model hub names the file's checksum on its redirect). */
  onResponse?: (res: IncomingMessage) => void;
}

/**
 * The 2xx response of `url` after at most `maxRedirects` redirects, its body unread, and the URL it came from.
 * Every hop is judged by checkUrl first and connects only to the addresses it vetted; a redirect is checked
 * before it is followed. The one way a server-side fetch of client-named media reaches the network.
 */
export async function openMediaResponse(
  url: URL,
  opts: OpenResponseOptions,
): Promise<{ res: IncomingMessage; url: URL }> {
  let current = url;
  for (let hop = 0; ; hop++) {
    const verdict = await untilAborted(checkUrl(current, opts, opts.resolve), opts.signal);
    if (!verdict.allowed) throw urlDenied(verdict, opts.param, opts.media ?? 'image');
    const res = await requestOnce(current, opts, verdict.addresses, opts.signal);
    opts.onResponse?.(res);
    if (REDIRECTS.has(res.statusCode ?? 0)) {
      res.destroy();
      const location = res.headers.location;
      if (!location)
        throw errors.imageFetchFailed(
          opts.param,
          `upstream answered ${res.statusCode} without a Location header`,
          opts.media,
        );
      if (hop >= opts.maxRedirects)
        throw errors.imageFetchFailed(opts.param, `more than ${opts.maxRedirects} redirects`, opts.media);
      current = redirectTarget(current, location, opts.param, opts.media);
      continue;
    }
    const status = res.statusCode ?? 0;
    // 416 to a range from the start of a held part: that part is no prefix the server can continue (the
    // caller starts over), so it is handed back rather than refused.
    if ((status < 200 || status > 299) && !(status === 416 && opts.range && opts.range.end === undefined)) {
      res.destroy();
      throw errors.imageFetchFailed(opts.param, `upstream answered ${status}`, opts.media);
    }
    return { res, url: current };
  }
}

function redirectTarget(from: URL, location: string, param: string, media?: FetchedMedia): URL {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw errors.imageFetchFailed(param, `upstream redirected to an invalid URL`, media);
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:')
    throw errors.imageFetchFailed(
      param,
      `upstream redirected to an unsupported ${next.protocol.replace(/:$/, '')} URL`,
      media,
    );
  return next;
}

/** DNS resolution has no abort; the deadline or a client abort must not wait for it. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A socket lookup that answers with the addresses checkUrl vetted instead of asking DNS again, so the host
 * cannot resolve to something else between the check and the connection.
 */
function pinnedLookup(addresses: readonly string[]): LookupFunction {
  return ((
    hostname: string,
    options: { all?: boolean; family?: number | string },
    callback: (...args: unknown[]) => void,
  ) => {
    const want = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    const list = addresses
      .map((address) => ({ address, family: isIP(address) }))
      .filter((a) => want === 0 || a.family === want);
    if (list.length === 0)
      return callback(Object.assign(new Error(`no IPv${want} address for ${hostname}`), { code: 'ENOTFOUND' }));
    if (options.all) callback(null, list);
    else callback(null, list[0]!.address, list[0]!.family);
  }) as LookupFunction;
}

/** Sends one GET and resolves with the response head; the body is left unread. `addresses`: where it may connect (absent: any). */
function requestOnce(
  url: URL,
  opts: OpenResponseOptions,
  addresses: readonly string[] | undefined,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (e: unknown) => {
      if (settled) return;
      settled = true;
      req.destroy();
      reject(e);
    };
    const req = client.request(url, {
      method: 'GET',
      agent: false,
      ...(addresses ? { lookup: pinnedLookup(addresses) } : {}),
      signal,
      headers: {
        'user-agent': 'sightflow-image-fetch/1',
        accept: ACCEPT[opts.media ?? 'image'],
        'accept-encoding': 'identity',
        ...(opts.range
          ? {
              range: `bytes=${opts.range.start}-${opts.range.end !== undefined && opts.range.end >= 0 ? opts.range.end - 1 : ''}`,
            }
          : {}),
      },
    });
    // Second line of defence: whatever the lookup said, the peer we are connected to must pass the policy too.
    req.once('socket', (socket: Socket) => {
      const check = () => {
        const peer = socket.remoteAddress;
        const refused = peer === undefined ? 'unknown peer address' : addressRefusal(peer, opts);
        if (refused) fail(errors.urlNotAllowed(opts.param, `${host} connected to ${peer} (${refused})`));
      };
      if (socket.remoteAddress !== undefined && !socket.connecting) check();
      else socket.once('connect', check);
    });
    req.once('response', (res) => {
      if (settled) return res.destroy();
      settled = true;
      resolve(res);
    });
    req.on('error', (e) => fail(networkError(e, url, opts.param, opts.media)));
    req.end();
  });
}

function networkError(e: unknown, url: URL, param: string, media?: FetchedMedia): unknown {
  if (e instanceof ApiError) return e;
  const err = e as NodeJS.ErrnoException & { name?: string };
  if (err.name === 'AbortError') return e; // the caller knows whether it was the deadline or the client
  const where = `${url.hostname}${url.port ? ':' + url.port : ''}`;
  switch (err.code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NODATA':
      return errors.imageFetchFailed(param, `could not resolve host ${url.hostname}`, media);
    case 'ECONNREFUSED':
      return errors.imageFetchFailed(param, `connection refused by ${where}`, media);
    case 'ECONNRESET':
    case 'EPIPE':
      return errors.imageFetchFailed(param, `connection reset by ${where}`, media);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return errors.imageFetchFailed(param, `${where} is unreachable`, media);
    case 'ETIMEDOUT':
      return errors.imageFetchFailed(param, `connection to ${where} timed out`, media);
    default:
      if (err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT') || err.code?.startsWith('ERR_SSL'))
        return errors.imageFetchFailed(param, `TLS handshake with ${where} failed (${err.code})`, media);
      return errors.imageFetchFailed(param, `request to ${where} failed (${err.code ?? err.message})`, media);
  }
}

/** Reads the body, giving up as soon as it passes `maxBytes` so a huge image or audio file never sits in memory. */
function readCapped(
  res: IncomingMessage,
  maxBytes: number,
  url: URL,
  param: string,
  media?: FetchedMedia,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        res.destroy();
        reject(errors.payloadTooLarge(media ?? 'image', maxBytes));
        return;
      }
      parts.push(chunk);
    });
    res.once('end', () => resolve(Buffer.concat(parts, size)));
    // A reset mid-body surfaces as 'error' (ECONNRESET, "aborted") or only as an early 'close'; either way the cause
    // the client can act on is the same. A deadline or client abort is told apart by the caller.
    const cut = () =>
      reject(errors.imageFetchFailed(param, `${url.host} closed the connection before the body was complete`, media));
    res.on('error', cut);
    res.once('close', () => {
      if (!res.complete) cut();
    });
  });
}
