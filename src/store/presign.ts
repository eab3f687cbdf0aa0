// Presigned links to blobs: /v1/files/<key>?expires=<unix>&sig=<hex HMAC-SHA256 of key and expiry>. The signature is
// the credential, so the link works without an API key and stops working when tampered with or expired.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { loadOrCreateSecretFile } from './secret-file.js';

export const DEFAULT_LINK_TTL_S = 3600;
const SECRET_FILE = 'signing-secret';

export interface PresignOptions {
  secret: string | Buffer;
  expiresInS?: number;
  /** Milliseconds since the epoch (Date.now()); tests pin it. */
  now?: number;
}

/** Hex HMAC over key and expiry; the newline cannot occur in a key, so (key, expires) pairs never collide. */
export function signature(key: string, expires: number, secret: string | Buffer): string {
  return createHmac('sha256', secret).update(`${key}\n${expires}`).digest('hex');
}

/** The path-and-query of a link to `key`, valid for expiresInS seconds (default one hour). */
export function presign(key: string, opts: PresignOptions): string {
  const expires = Math.floor((opts.now ?? Date.now()) / 1000) + (opts.expiresInS ?? DEFAULT_LINK_TTL_S);
  const path = key.split('/').map(encodeURIComponent).join('/');
  return `/v1/files/${path}?expires=${expires}&sig=${signature(key, expires, opts.secret)}`;
}

export type VerifyResult =
  | { ok: true; expires: number }
  | { ok: false; reason: 'missing' | 'malformed' | 'expired' | 'mismatch' };

/** Checks a link's expires and sig for `key` in constant time. Expiry is checked after the signature. */
export function verify(
  key: string,
  expires: string | null | undefined,
  sig: string | null | undefined,
  secret: string | Buffer,
  now = Date.now(),
): VerifyResult {
  if (!expires || !sig) return { ok: false, reason: 'missing' };
  if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/i.test(sig)) return { ok: false, reason: 'malformed' };
  const exp = Number(expires);
  const expected = Buffer.from(signature(key, exp, secret), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) return { ok: false, reason: 'mismatch' };
  // Valid until the end of the expiry second.
  if (Math.floor(now / 1000) > exp) return { ok: false, reason: 'expired' };
  return { ok: true, expires: exp };
}

/** The signing secret kept in <dataDir>/signing-secret, created (32 random bytes, hex, mode 0600) on first use. */
export async function loadOrCreateSigningSecret(dataDir: string): Promise<string> {
  const file = await loadOrCreateSecretFile(
    dataDir,
    SECRET_FILE,
    () => randomBytes(32).toString('hex'),
    'SIGHTFLOW_SIGNING_SECRET',
  );
  return file.value;
}
