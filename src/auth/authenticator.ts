// Resolves `Authorization: Bearer sk_sf_...` to a project. Results are cached for a short TTL so that a
// disabled key stops working within SIGHTFLOW_KEY_CACHE_MS (default 2 s, under the 5 s promise) on every node.
// A key in steady use is looked up again in the background in the last quarter of its entry's time, so its
// requests never wait on the lookup (in a front process a round trip to `serve` and a database statement)
// when the entry runs out; an entry is still never used past its time, so a disable takes effect as soon. The
// quarter leaves the lookup hundreds of milliseconds at the default time, and adds a lookup only every three
// quarters of it instead of every whole one.
// Times are performance.now() milliseconds: monotonic (a clock step neither extends nor ends a TTL), and the
// server passes the one it took when the request arrived, so the hot path reads no clock of its own.
import { errors } from '../base/errors.js';
import { hashKey, isWellFormedKey, sameDigest } from './api-key.js';
import type { Projects } from './projects.js';

export interface Principal {
  projectId: string;
  keyId: string;
}

interface CacheEntry {
  /** The presented key (process memory only), for the lookup that refreshes the entry. */
  key: string;
  principal: Principal | null;
  disabled: boolean;
  until: number;
  touchedAt: number;
  /** Set once its background lookup has started (at most one an entry). */
  refreshing: boolean;
}

const TOUCH_EVERY_MS = 60_000;
const MAX_CACHE = 10_000;

export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  /** The same entries by the raw Authorization header they were presented in. */
  private readonly byHeader = new Map<string, CacheEntry>();
  private readonly touched = new Map<string, number>();

  constructor(
    /** The key store: the database in `serve`, the pipe to `serve` in a front process (http/fronts). */
    private readonly projects: Pick<Projects, 'keyByHash' | 'touchKey'>,
    private readonly ttlMs: number,
  ) {}

  /**
   * The principal for a header, synchronously: from the cache, or a thrown 401 for a malformed header.
   * Undefined when the key must be looked up (authenticate() does that); the hot path then needs no await.
   */
  cached(header: string | undefined, now = performance.now()): Principal | undefined {
    // By the exact header first: a header seen before was well-formed, so no parsing (the hot path).
    let entry = header === undefined ? undefined : this.byHeader.get(header);
    if (!entry || entry.until <= now) {
      entry = this.cache.get(this.keyOf(header));
      if (!entry || entry.until <= now) return undefined;
    }
    if (!entry.refreshing && entry.principal && entry.until - now <= this.ttlMs / 4) this.refresh(entry, header!, now);
    return this.check(entry, now);
  }

  /**
   * Looks the entry's key up again and puts the answer in its place, for this header too; its time counts from
   * the request's (`now`, before the lookup). A failed lookup leaves the entry to run out: the request after it
   * then looks the key up itself and answers the error.
   */
  private refresh(entry: CacheEntry, header: string, now: number): void {
    entry.refreshing = true;
    this.fetch(entry.key, now).then(
      (next) => {
        next.touchedAt = entry.touchedAt;
        if (this.cache.get(entry.key) === entry) this.cache.set(entry.key, next);
        if (this.byHeader.get(header) === entry) this.byHeader.set(header, next);
      },
      () => {},
    );
  }

  async authenticate(header: string | undefined): Promise<Principal> {
    const key = this.keyOf(header);
    const entry = await this.lookup(key);
    if (this.byHeader.size >= MAX_CACHE) this.byHeader.clear();
    this.byHeader.set(header!, entry);
    return this.check(entry, performance.now());
  }

  private async lookup(key: string): Promise<CacheEntry> {
    // Keyed by the presented key itself (process memory only), so a cached hit costs no hashing.
    const now = performance.now();
    let entry = this.cache.get(key);
    if (!entry || entry.until <= now) {
      entry = await this.fetch(key, now);
      if (this.cache.size >= MAX_CACHE) this.cache.clear();
      this.cache.set(key, entry);
    }
    return entry;
  }

  /** A fresh entry from the key store, its time counted from `now` (taken before the lookup). */
  private async fetch(key: string, now: number): Promise<CacheEntry> {
    const hash = hashKey(key);
    const row = await this.projects.keyByHash(hash);
    const principal = row && sameDigest(row.key_hash, hash) ? { projectId: row.project_id, keyId: row.id } : null;
    return {
      key,
      principal,
      disabled: row?.disabled ?? false,
      until: now + this.ttlMs,
      touchedAt: -Infinity,
      refreshing: false,
    };
  }

  private keyOf(header: string | undefined): string {
    if (!header)
      throw errors.authentication(
        'missing_api_key',
        'Missing Authorization header; expected "Authorization: Bearer sk_sf_..."',
      );
    const m = /^Bearer ([^\s]+)$/i.exec(header.trim());
    if (!m) throw errors.authentication('invalid_api_key', 'Expected Authorization scheme "Bearer <API key>"');
    const key = m[1]!;
    if (!isWellFormedKey(key))
      throw errors.authentication(
        'invalid_api_key',
        'Malformed API key; keys look like sk_sf_ followed by 43 base64url characters',
      );
    return key;
  }

  private check(entry: CacheEntry, now: number): Principal {
    if (!entry.principal) throw errors.authentication('invalid_api_key', 'Unknown API key');
    if (entry.disabled) throw errors.authentication('disabled_api_key', 'This API key has been disabled');
    // The entry remembers its last touch, so a busy key costs no map lookup per request.
    if (now - entry.touchedAt >= TOUCH_EVERY_MS) {
      entry.touchedAt = now;
      this.touch(entry.principal.keyId, now);
    }
    return entry.principal;
  }

  /** last_used_at, written at most once a minute per key and never on the request's critical path. */
  private touch(keyId: string, now: number): void {
    const last = this.touched.get(keyId) ?? -Infinity;
    if (now - last < TOUCH_EVERY_MS) return;
    this.touched.set(keyId, now);
    this.projects.touchKey(keyId).catch(() => {});
  }
}
