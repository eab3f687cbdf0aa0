// The URL policy of every server-side fetch of client-given media (image and audio inputs, video URLs): only
// http(s), and never to loopback, private, link-local, metadata or otherwise non-public addresses unless the
// operator allows private URLs. checkUrl is the one decision: it resolves the host and refuses the URL when ANY
// address is refused (a caller such as FFmpeg may connect to whichever it likes) or when the host cannot be
// resolved (an address that cannot be checked is not allowed). The fetcher connects only to the addresses
// checkUrl vetted, so a second DNS answer cannot slip a private address in between.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { errors, type ApiError, type FetchedMedia } from '../base/errors.js';

type Range4 = readonly [base: number, bits: number, label: string];

const v4 = (s: string) => s.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);

// Everything that is not ordinary public unicast. Order matters only for the label.
const BLOCKED_V4: readonly Range4[] = [
  [v4('0.0.0.0'), 8, 'this-network'],
  [v4('10.0.0.0'), 8, 'private'],
  [v4('100.64.0.0'), 10, 'carrier-grade NAT'],
  [v4('127.0.0.0'), 8, 'loopback'],
  [v4('169.254.0.0'), 16, 'link-local / metadata'],
  [v4('172.16.0.0'), 12, 'private'],
  [v4('192.0.0.0'), 24, 'IETF protocol assignments'],
  [v4('192.0.2.0'), 24, 'documentation'],
  [v4('192.88.99.0'), 24, '6to4 relay anycast'],
  [v4('192.168.0.0'), 16, 'private'],
  [v4('198.18.0.0'), 15, 'benchmarking'],
  [v4('198.51.100.0'), 24, 'documentation'],
  [v4('203.0.113.0'), 24, 'documentation'],
  [v4('224.0.0.0'), 4, 'multicast'],
  [v4('240.0.0.0'), 4, 'reserved'],
];

function classifyV4(addr: string): string | null {
  const n = v4(addr);
  for (const [base, bits, label] of BLOCKED_V4) {
    const size = 2 ** (32 - bits);
    if (n >= base && n < base + size) return label;
  }
  return null;
}

/** Expands an IPv6 text address (with optional embedded IPv4 and zone id) to eight 16-bit groups. */
function parseV6(addr: string): number[] {
  let s = addr.replace(/%.*$/, '');
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    const n = v4(s.slice(lastColon + 1));
    s = `${s.slice(0, lastColon + 1)}${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;
  }
  const hex = (part: string) => (part === '' ? [] : part.split(':').map((x) => parseInt(x, 16)));
  if (!s.includes('::')) return hex(s);
  const [head, rest] = s.split('::');
  const h = hex(head);
  const r = hex(rest);
  return [...h, ...new Array<number>(Math.max(0, 8 - h.length - r.length)).fill(0), ...r];
}

function classifyV6(addr: string): string | null {
  const g = parseV6(addr);
  if (g.length !== 8) return 'unparseable IPv6';
  const embedded = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && g[7] === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the IPv4 inside.
  if (zeroUpTo(5) && (g[5] === 0xffff || g[5] === 0))
    return prefixed(classifyV4(embedded(g[6], g[7])), g[5] === 0 ? 'IPv4-compatible' : 'IPv4-mapped');
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))
    return prefixed(classifyV4(embedded(g[6], g[7])), 'NAT64');
  if (g[0] === 0x2002) return prefixed(classifyV4(embedded(g[1], g[2])), '6to4');
  if ((g[0] & 0xfe00) === 0xfc00) return 'unique local (private)';
  if ((g[0] & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0] & 0xffc0) === 0xfec0) return 'site-local';
  if ((g[0] & 0xff00) === 0xff00) return 'multicast';
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'documentation';
  if (g[0] === 0x0100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return 'discard-only';
  // Only global unicast (2000::/3) is routable on the public internet.
  if ((g[0] & 0xe000) !== 0x2000) return 'reserved';
  return null;
}

const prefixed = (label: string | null, how: string) => (label === null ? null : `${how} ${label}`);

/**
 * Why an IP address must not be fetched from, or null when it is public. Non-IP text is refused too, so a
 * caller can never pass a hostname here by mistake.
 */
export function blockedAddressReason(address: string): string | null {
  const family = isIP(address.replace(/%.*$/, ''));
  if (family === 4) return classifyV4(address);
  if (family === 6) return classifyV6(address);
  return 'not an IP address';
}

/** One CIDR block of SIGHTFLOW_URL_ALLOW / SIGHTFLOW_URL_DENY, as a prefix of the 128-bit address space
 * (IPv4 blocks live at ::ffff:0:0/96, so an IPv4-mapped IPv6 address matches the IPv4 block). */
export interface Cidr {
  text: string;
  base: bigint;
  bits: number;
}

const V4_MAPPED = 0xffffn << 32n;

/** The 128-bit value of an IP address (IPv4 as IPv4-mapped), or null when the text is not an IP address. */
function addressBits(address: string): bigint | null {
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return V4_MAPPED | BigInt(v4(bare));
  if (family !== 6) return null;
  const g = parseV6(bare);
  if (g.length !== 8) return null;
  return g.reduce((acc, x) => (acc << 16n) | BigInt(x), 0n);
}

/** Parses "10.0.0.0/8", "fd00::/8" or a bare address (a /32 or /128); throws an Error saying why on bad text. */
export function parseCidr(text: string): Cidr {
  const t = text.trim();
  const slash = t.indexOf('/');
  const addr = slash < 0 ? t : t.slice(0, slash);
  const family = isIP(addr);
  if (family === 0) throw new Error(`${JSON.stringify(t)} is not an IP address or CIDR block`);
  const max = family === 4 ? 32 : 128;
  const prefix = slash < 0 ? max : Number(t.slice(slash + 1));
  if (
    !/^\d+$/.test(slash < 0 ? String(max) : t.slice(slash + 1)) ||
    !Number.isInteger(prefix) ||
    prefix < 0 ||
    prefix > max
  ) {
    throw new Error(`${JSON.stringify(t)} has a prefix length outside 0-${max}`);
  }
  const bits = family === 4 ? 96 + prefix : prefix;
  const mask = bits === 0 ? 0n : ((1n << BigInt(bits)) - 1n) << BigInt(128 - bits);
  return { text: t, base: addressBits(addr)! & mask, bits };
}

/** Parses a comma-separated CIDR list (blank entries ignored). */
export function parseCidrList(text: string | undefined): Cidr[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(parseCidr);
}

function inAny(address: string, blocks: readonly Cidr[] | undefined): Cidr | null {
  if (!blocks?.length) return null;
  const n = addressBits(address);
  if (n === null) return null;
  for (const b of blocks) {
    if (b.bits === 0 || n >> BigInt(128 - b.bits) === b.base >> BigInt(128 - b.bits)) return b;
  }
  return null;
}

/**
 * Which addresses a server-side fetch may connect to. One rule set for image, audio and video URLs (and
 * every redirect, playlist and segment of them): the default deny list (blockedAddressReason), `allow`
 * blocks let through although the default refuses them, `deny` blocks are always refused (deny wins over
 * allow and over allowPrivate).
 */
export interface UrlPolicy {
  /** Allow private, loopback and link-local addresses (tests, trusted intranets); `deny` still holds. */
  allowPrivate: boolean;
  /** Exact addresses allowed even when private (an internal CDN, a test server). */
  allowAddresses?: readonly string[];
  /** SIGHTFLOW_URL_ALLOW: blocks allowed although the default list refuses them. */
  allow?: readonly Cidr[];
  /** SIGHTFLOW_URL_DENY: blocks always refused. */
  deny?: readonly Cidr[];
}

/** Null when `address` may be connected to under `policy`, else the reason it may not. */
export function addressRefusal(address: string, policy: UrlPolicy): string | null {
  const denied = inAny(address, policy.deny);
  if (denied) return `denied by SIGHTFLOW_URL_DENY ${denied.text}`;
  if (policy.allowPrivate) return null;
  if (policy.allowAddresses?.includes(address)) return null;
  if (inAny(address, policy.allow)) return null;
  return blockedAddressReason(address);
}

/** Every address of a host name, in resolver order; rejects when the name does not resolve. */
export type Resolver = (host: string) => Promise<readonly string[]>;

export const resolveHost: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * A resolver that asks `resolve` once per host and answers every later question about it the same way, so all
 * requests of one job (a video's redirects, ranged re-requests, playlists and segments) connect to addresses
 * from the one answer that was checked, whatever a later DNS answer would say. A failed lookup is not kept.
 */
export function resolveOnce(resolve: Resolver = resolveHost): Resolver {
  const answers = new Map<string, Promise<readonly string[]>>();
  return (host) => {
    let answer = answers.get(host);
    if (!answer) {
      answer = resolve(host);
      answers.set(host, answer);
      answer.catch(() => answers.delete(host));
    }
    return answer;
  };
}

export type UrlVerdict =
  /** `addresses`: the vetted addresses to connect to; absent when the policy allows every address (nothing was resolved). */
  | { allowed: true; host: string; addresses?: readonly string[] }
  /** `refused`: the scheme or an address is not allowed; `unresolved`: the host did not resolve, so it could not be checked. */
  | { allowed: false; host: string; reason: 'refused' | 'unresolved'; detail: string; cause?: unknown };

/** Decides whether `url` may be fetched under `policy`. Never throws; `resolve` is a seam for tests. */
const WEB_SCHEMES: readonly string[] = ['http:', 'https:'];

export interface CheckOptions {
  /** Schemes allowed, with their colon; default http: and https:. */
  schemes?: readonly string[];
}

export async function checkUrl(
  url: URL | string,
  policy: UrlPolicy,
  resolve: Resolver = resolveHost,
  options: CheckOptions = {},
): Promise<UrlVerdict> {
  let u: URL;
  try {
    u = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return { allowed: false, host: '', reason: 'refused', detail: 'it is not a valid absolute URL' };
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const schemes = options.schemes ?? WEB_SCHEMES;
  if (!schemes.includes(u.protocol))
    return {
      allowed: false,
      host,
      reason: 'refused',
      detail: `the scheme ${u.protocol.replace(/:$/, '')} is not allowed`,
    };
  if (!host) return { allowed: false, host, reason: 'refused', detail: 'the URL has no host' };
  // Allowing everything needs no lookup, unless a deny list must still be applied to the addresses.
  if (policy.allowPrivate && !policy.deny?.length) return { allowed: true, host };
  if (isIP(host)) {
    const why = addressRefusal(host, policy);
    return why
      ? { allowed: false, host, reason: 'refused', detail: `${host} is ${why}` }
      : { allowed: true, host, addresses: [host] };
  }
  let addresses: readonly string[];
  try {
    addresses = await resolve(host);
  } catch (e) {
    return { allowed: false, host, reason: 'unresolved', detail: `could not resolve host ${host}`, cause: e };
  }
  if (addresses.length === 0)
    return { allowed: false, host, reason: 'unresolved', detail: `could not resolve host ${host}` };
  for (const a of addresses) {
    const why = addressRefusal(a, policy);
    if (why) return { allowed: false, host, reason: 'refused', detail: `${host} resolves to ${a} (${why})` };
  }
  return { allowed: true, host, addresses };
}

/**
 * The client error for a URL checkUrl denied, the same for every media input: url_not_allowed for a refused
 * address, image_fetch_failed ("could not resolve host") when the host did not resolve.
 */
export function urlDenied(
  verdict: Extract<UrlVerdict, { allowed: false }>,
  param: string,
  media: FetchedMedia,
): ApiError {
  return verdict.reason === 'unresolved'
    ? errors.imageFetchFailed(param, verdict.detail, media)
    : errors.urlNotAllowed(param, verdict.detail);
}
