// Model downloads for `sightflow models add` and POST /admin/v1/models: a plain http(s) URL, or a Hugging
// Face reference `owner/repo[@rev]:path` read through the hub's public file URLs
// (<hub>/<owner>/<repo>/resolve/<rev>/<path>; the hub is SIGHTFLOW_MODEL_HUB_URL). Every hop passes the URL
// policy (media/fetch.ts). Models are large and links drop: the body streams into `<dest>.part`, a cut
// connection is resumed with a Range request, and only a file whose sha256 matches (the one given, else the
// hub's X-Linked-Etag when it is a sha256) is renamed into place; a mismatch deletes the part file, so nothing
// half-written stays.
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { ApiError, errors } from '../base/errors.js';
import { openMediaResponse } from '../media/fetch.js';
import type { UrlPolicy } from '../media/url-policy.js';
import { sha256File } from '../inference/registry.js';

/** What `models add` was given: a local file, or where to download one from. */
export type ModelSource =
  | { kind: 'file'; path: string }
  | { kind: 'url'; url: URL /** The hub reference it came from, if any. */; ref?: string; fileName: string };

const HUB_REF = /^([A-Za-z0-9][\w.-]*)\/([\w.-]+)(?:@([^:\s]+))?:(.+)$/;

/**
 * Reads a source argument: an http(s) URL, a hub reference `owner/repo[@rev]:path`, or else a local path.
 * `isFile` says whether a local path exists (a path that looks like a hub reference but exists is a file).
 */
export function parseModelSource(source: string, hubUrl: string, isFile: (p: string) => boolean): ModelSource {
  const s = source.trim();
  if (/^https?:\/\//i.test(s)) {
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      throw errors.invalidParam('source', `Expected source to be a valid URL but received ${JSON.stringify(s)}`);
    }
    return { kind: 'url', url, fileName: fileNameOf(url.pathname.split('/').pop() || 'model.onnx') };
  }
  if (isFile(s)) return { kind: 'file', path: s };
  const m = HUB_REF.exec(s);
  if (m) {
    const [, owner, repo, rev, path] = m as unknown as [string, string, string, string | undefined, string];
    const base = hubUrl.replace(/\/+$/, '');
    const enc = (p: string) => p.split('/').map(encodeURIComponent).join('/');
    return {
      kind: 'url',
      ref: s,
      fileName: path.split('/').pop()!,
      url: new URL(`${base}/${enc(owner)}/${enc(repo)}/resolve/${encodeURIComponent(rev ?? 'main')}/${enc(path)}`),
    };
  }
  throw errors.invalidParam(
    'source',
    `Expected source to be an existing .onnx file, an http(s) URL or a Hugging Face reference owner/repo[@rev]:path but received ${JSON.stringify(s)}`,
  );
}

/**
 * A URL's last path segment as a file name: percent-decoded, or as written where it is not valid percent-encoding
 * (`%zz`), which URLs allow and servers may take as it is.
 */
function fileNameOf(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export interface DownloadProgress {
  bytes: number;
  total: number | null;
  resumedFrom: number;
}

export interface DownloadOptions extends UrlPolicy {
  /** Expected sha256 (lowercase hex); without it the hub's X-Linked-Etag is used when it is one. */
  sha256?: string;
  onProgress?: (p: DownloadProgress) => void;
  signal?: AbortSignal;
  /** Connections tried in all (the first plus resumes after a cut); default 5. */
  attempts?: number;
  /** A connection that sends nothing for this long is cut (and resumed); default 30 s. */
  stallMs?: number;
  maxRedirects?: number;
  /** Largest file accepted; default 4 GiB. */
  maxBytes?: number;
}

export interface DownloadResult {
  path: string;
  sha256: string;
  bytes: number;
  resumes: number;
  expected: 'given' | 'hub' | 'none';
}

/** Downloads `url` to `dest` (atomically: written as `<dest>.part`, renamed when its checksum is right). */
export async function downloadModel(url: URL, dest: string, opts: DownloadOptions): Promise<DownloadResult> {
  const part = `${dest}.part`;
  const attempts = opts.attempts ?? 5;
  const maxBytes = opts.maxBytes ?? 4 * 1024 ** 3;
  let expected = opts.sha256?.toLowerCase();
  let expectedFrom: DownloadResult['expected'] = expected ? 'given' : 'none';
  let resumes = 0;
  for (let attempt = 1; ; attempt++) {
    const have = await stat(part).then(
      (st) => st.size,
      () => 0,
    );
    const stall = new AbortController();
    const onAbort = () => stall.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let gotBytes = false;
    const stallMs = opts.stallMs ?? 30_000;
    // The answer's head must come within the stall time too (a server that accepts and says nothing).
    const headTimer = setTimeout(() => stall.abort(), stallMs);
    try {
      const { res } = await openMediaResponse(url, {
        ...opts,
        param: 'source',
        media: 'model',
        maxRedirects: opts.maxRedirects ?? 5,
        signal: stall.signal,
        ...(have > 0 ? { range: { start: have } } : {}),
        onResponse: (r) => {
          // The hub answers a file of its LFS store with its sha256 as X-Linked-Etag (on the redirect).
          const tag = String(r.headers['x-linked-etag'] ?? '')
            .replace(/^W\//, '')
            .replace(/"/g, '');
          if (!expected && /^[0-9a-f]{64}$/.test(tag)) {
            expected = tag;
            expectedFrom = 'hub';
          }
        },
      });
      clearTimeout(headTimer);
      if (res.statusCode === 416) {
        res.destroy();
        await rm(part, { force: true });
        continue;
      }
      const resumed = res.statusCode === 206 && have > 0;
      if (have > 0 && resumed) resumes++;
      const start = resumed ? have : 0;
      const total = totalSize(res, start);
      if (total !== null && total > maxBytes) {
        res.destroy();
        throw errors.payloadTooLarge('model', maxBytes);
      }
      await pipeToFile(
        res,
        part,
        resumed,
        stallMs,
        stall,
        (bytes) => {
          gotBytes = true;
          if (bytes > maxBytes) throw errors.payloadTooLarge('model', maxBytes);
          opts.onProgress?.({ bytes, total, resumedFrom: start });
        },
        start,
      );
      break;
    } catch (e) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      // A connection that was cut after it delivered something is resumed; anything else is final.
      const retry = gotBytes && attempt < attempts && !(e instanceof ApiError && e.status === 413);
      if (!retry) {
        if (e instanceof ApiError) throw e;
        if (stall.signal.aborted && !gotBytes)
          throw errors.imageFetchFailed('source', `no answer within ${stallMs} ms`, 'model');
        throw errors.imageFetchFailed('source', (e as Error).message, 'model');
      }
    } finally {
      clearTimeout(headTimer);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }
  const sha = await sha256File(part);
  if (expected && sha !== expected) {
    await rm(part, { force: true });
    throw errors.modelChecksumMismatch(sha, expected);
  }
  await rename(part, dest);
  return { path: dest, sha256: sha, bytes: (await stat(dest)).size, resumes, expected: expectedFrom };
}

function totalSize(res: IncomingMessage, start: number): number | null {
  const range = /\/(\d+)\s*$/.exec(String(res.headers['content-range'] ?? ''));
  if (range) return Number(range[1]);
  const len = Number(res.headers['content-length']);
  return Number.isFinite(len) && res.headers['content-length'] !== undefined ? start + len : null;
}

/** Streams the body into `path` (appending when resuming); rejects when the connection ends early or stalls. */
function pipeToFile(
  res: IncomingMessage,
  path: string,
  append: boolean,
  stallMs: number,
  stall: AbortController,
  onBytes: (bytes: number) => void,
  start: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(path, { flags: append ? 'a' : 'w' });
    let bytes = start;
    let done = false;
    let timer = setTimeout(() => stall.abort(), stallMs);
    const fail = (e: unknown) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      res.destroy();
      out.end(() => reject(e instanceof Error ? e : new Error(String(e))));
    };
    stall.signal.addEventListener('abort', () => fail(new Error(`the connection sent nothing for ${stallMs} ms`)), {
      once: true,
    });
    res.on('data', (chunk: Buffer) => {
      clearTimeout(timer);
      timer = setTimeout(() => stall.abort(), stallMs);
      bytes += chunk.length;
      try {
        onBytes(bytes);
      } catch (e) {
        fail(e);
        return;
      }
      if (!out.write(chunk)) {
        res.pause();
        out.once('drain', () => res.resume());
      }
    });
    res.once('end', () => {
      if (done) return;
      if (!res.complete) return fail(new Error('the connection closed before the file was complete'));
      done = true;
      clearTimeout(timer);
      out.end((err?: Error | null) => (err ? reject(err) : resolve()));
    });
    res.once('error', () => fail(new Error('the connection was cut before the file was complete')));
    res.once('close', () => {
      if (!res.complete) fail(new Error('the connection closed before the file was complete'));
    });
    out.once('error', (e) => fail(e));
  });
}
