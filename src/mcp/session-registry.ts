// Open MCP sessions of this process: who owns each (the API key that opened it), when it was last used, and
// how to end it. A session id presented with another key answers exactly like an unknown one (404), so ids
// reveal nothing across keys; sessions idle past the limit are closed by a sweep; a key holds a bounded
// number of sessions (429 beyond it), counting ones still being set up so concurrent opens cannot overshoot.
import { errors } from '../base/errors.js';
import type { Principal } from '../auth/authenticator.js';
import type { Logger } from '../base/log.js';

export type TransportKind = 'streamable-http' | 'sse';

export interface McpSession {
  id: string;
  kind: TransportKind;
  principal: Principal;
  lastActive: number;
  /** Requests or tool calls in progress; a busy session never expires. */
  inFlight: number;
  /** Ends the transport and the server; idempotent. The registry entry is removed by remove(). */
  close(): Promise<void>;
}

export interface SessionLimits {
  idleMs: number;
  maxPerKey: number;
}

export class SessionRegistry<S extends McpSession = McpSession> {
  private readonly sessions = new Map<string, S>();
  private readonly opening = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly limits: SessionLimits,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  countFor(keyId: string): number {
    let n = this.opening.get(keyId) ?? 0;
    for (const s of this.sessions.values()) if (s.principal.keyId === keyId) n++;
    return n;
  }

  /** Claims a slot for a session about to be opened; the returned function gives it back (call it once). */
  reserve(principal: Principal): () => void {
    if (this.countFor(principal.keyId) >= this.limits.maxPerKey) {
      const retry = Math.max(1, Math.ceil(this.limits.idleMs / 1000));
      throw errors.tooManySessions(this.limits.maxPerKey, Math.round(this.limits.idleMs / 1000), retry);
    }
    this.opening.set(principal.keyId, (this.opening.get(principal.keyId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.opening.get(principal.keyId) ?? 1) - 1;
      if (n > 0) this.opening.set(principal.keyId, n);
      else this.opening.delete(principal.keyId);
    };
  }

  add(s: S): void {
    this.sessions.set(s.id, s);
    this.log.info({ mcpSession: s.id, transport: s.kind, project: s.principal.projectId }, 'mcp session opened');
  }

  /** The caller's session, or 404 for an unknown, expired or another key's id. */
  get(id: string | undefined, principal: Principal, kind?: TransportKind): S {
    const s = id ? this.sessions.get(id) : undefined;
    if (!s || s.principal.keyId !== principal.keyId || (kind && s.kind !== kind)) {
      throw errors.sessionNotFound(id, Math.round(this.limits.idleMs / 1000), kind === 'sse' ? 'sessionId' : null);
    }
    s.lastActive = this.now();
    return s;
  }

  has(id: string): boolean {
    return this.sessions.has(id);
  }

  remove(id: string): void {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    this.log.info({ mcpSession: id, transport: s.kind }, 'mcp session closed');
  }

  /** Runs `work` with the session marked busy and touched at both ends. */
  async using<T>(s: S, work: () => Promise<T>): Promise<T> {
    s.inFlight++;
    s.lastActive = this.now();
    try {
      return await work();
    } finally {
      s.inFlight--;
      s.lastActive = this.now();
    }
  }

  /** Closes sessions idle past the limit; returns how many. */
  sweep(): number {
    const now = this.now();
    let n = 0;
    for (const s of [...this.sessions.values()]) {
      if (s.inFlight > 0 || now - s.lastActive < this.limits.idleMs) continue;
      n++;
      this.sessions.delete(s.id);
      this.log.info({ mcpSession: s.id, transport: s.kind, idleMs: now - s.lastActive }, 'mcp session expired');
      s.close().catch((err) => this.log.warn({ err, mcpSession: s.id }, 'closing an expired mcp session failed'));
    }
    return n;
  }

  start(): void {
    if (this.timer) return;
    const every = Math.max(50, Math.min(30_000, Math.floor(this.limits.idleMs / 4)));
    this.timer = setInterval(() => this.sweep(), every);
    this.timer.unref();
  }

  async closeAll(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.close()));
  }
}
