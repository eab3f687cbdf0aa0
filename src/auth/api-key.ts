// API key format (docs/api.md, "Keys"): `sk_sf_` + base64url(32 random bytes). Only the SHA-256 and a hint
// (`sk_sf_...` + last 4) are stored.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'sk_sf_';
const KEY_RE = /^sk_sf_[A-Za-z0-9_-]{43}$/;

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function isWellFormedKey(key: string): boolean {
  return KEY_RE.test(key);
}

export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

export function keyHint(key: string): string {
  return `${KEY_PREFIX}...${key.slice(-4)}`;
}

/** Constant-time equality of two digests (the lookup is by hash; this guards the final comparison). */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
