// Verifying a webhook delivery (docs/video.md, "Webhooks"): Standard Webhooks signing, HMAC-SHA256 over
// "<webhook-id>.<webhook-timestamp>.<body>" keyed by the base64 after `whsec_`, sent as `v1,<base64>` (several
// space-separated signatures may come during a secret rotation). A timestamp more than `toleranceSeconds`
// from now is refused, so a captured delivery cannot be replayed later. Web Crypto only: Node and browsers.
import { WebhookVerificationError } from './errors.js';

export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Seconds a delivery's timestamp may be from now (default 300). */
  toleranceSeconds?: number;
  /** The current time in unix seconds (default the clock). */
  now?: number;
}

/** The delivery's payload: `{type: "video.task.<state>", timestamp, data: <the task record>}`. */
export interface WebhookEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown> & { id: string; status: string };
}

function header(h: HeaderSource, name: string): string | undefined {
  if (typeof (h as Headers).get === 'function') return (h as Headers).get(name) ?? undefined;
  for (const [k, v] of Object.entries(h as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

function fromBase64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function toBase64(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += String.fromCharCode(x);
  return btoa(s);
}

function equalConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return d === 0;
}

/** Checks a delivery and answers its parsed payload; throws WebhookVerificationError when it does not check out. */
export async function verifyWebhook(
  headers: HeaderSource,
  body: string | Uint8Array,
  secret: string,
  opts: VerifyOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const sigs = header(headers, 'webhook-signature');
  if (!id || !ts || !sigs)
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^\d+$/.test(ts)) throw new WebhookVerificationError('webhook-timestamp is not unix seconds');
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const tolerance = opts.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(ts)) > tolerance)
    throw new WebhookVerificationError(`webhook-timestamp is more than ${tolerance} s from now`);
  if (!secret.startsWith('whsec_')) throw new WebhookVerificationError('The secret must start with whsec_');
  let keyBytes: Uint8Array;
  try {
    keyBytes = fromBase64(secret.slice(6));
  } catch {
    throw new WebhookVerificationError('The secret is not base64 after whsec_');
  }
  const bodyBytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const prefix = new TextEncoder().encode(`${id}.${ts}.`);
  const signed = new Uint8Array(prefix.length + bodyBytes.length);
  signed.set(prefix, 0);
  signed.set(bodyBytes, prefix.length);
  const key = await globalThis.crypto.subtle.importKey(
    'raw',
    keyBytes as BufferSource,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const expected = toBase64(new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, signed as BufferSource)));
  const ok = sigs.split(' ').some((s) => {
    const [version, sig] = s.split(',', 2);
    return version === 'v1' && sig !== undefined && equalConstantTime(sig, expected);
  });
  if (!ok) throw new WebhookVerificationError('No signature matches the body');
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  try {
    return JSON.parse(text) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('The body is not JSON');
  }
}
