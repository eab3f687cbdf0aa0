// Resolving a /console request to a file of the built console (console/dist): content types, cache policy and
// the single-page-app fallback. Kept apart from the route so it can be reasoned about (and tested) alone.
import { stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

export function contentTypeOf(path: string): string {
  return CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

export type Resolved =
  | { kind: 'file'; path: string; size: number; headers: Record<string, string> }
  | { kind: 'not_built' }
  | { kind: 'missing' };

async function fileSize(path: string): Promise<number | null> {
  try {
    const st = await stat(path);
    return st.isFile() ? st.size : null;
  } catch {
    return null;
  }
}

// Vite names assets by content hash, so they never change under a name; index.html must always be re-read.
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

// The page holds the admin token: only its own scripts run. Videos may come from any http(s) URL a task was
// created with; thumbnails are presigned links here, dropped query images are data: URIs.
const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' http: https: blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * `rel` is the path below /console ('' for the root). Real files are served as they are; paths that look
 * like pages (no extension) fall back to index.html so deep links work; a missing asset is a plain 404.
 */
export async function resolveConsoleFile(distDir: string, rel: string): Promise<Resolved> {
  const indexPath = join(distDir, 'index.html');
  const indexSize = await fileSize(indexPath);
  if (indexSize === null) return { kind: 'not_built' };
  const index: Resolved = {
    kind: 'file',
    path: indexPath,
    size: indexSize,
    headers: {
      'Content-Type': contentTypeOf(indexPath),
      'Cache-Control': REVALIDATE,
      'Content-Security-Policy': PAGE_CSP,
      ...SECURITY_HEADERS,
    },
  };
  const clean = normalize(rel.replace(/^\/+/, ''));
  // normalize() keeps leading '..' segments: anything that climbs out of dist is treated as unknown.
  if (clean === '.' || clean === '' || clean === 'index.html') return index;
  if (clean.startsWith('..') || clean.includes('\0')) return { kind: 'missing' };
  const path = join(distDir, clean);
  if (!path.startsWith(distDir + sep)) return { kind: 'missing' };
  const size = await fileSize(path);
  if (size !== null) {
    const cache = clean.startsWith('assets' + sep) ? IMMUTABLE : REVALIDATE;
    return {
      kind: 'file',
      path,
      size,
      headers: { 'Content-Type': contentTypeOf(path), 'Cache-Control': cache, ...SECURITY_HEADERS },
    };
  }
  return extname(clean) === '' ? index : { kind: 'missing' };
}
