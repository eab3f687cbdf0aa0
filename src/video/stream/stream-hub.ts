// Wake-ups for stream subscribers and idle workers. Within a process an EventEmitter; across processes
// (PostgreSQL) LISTEN on one dedicated connection, fed by pg_notify in the appending transaction. A
// notification only says "look again": subscribers re-read the archive, so a lost one costs a poll interval,
// never bytes.
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Services } from '../../services.js';
import { sql } from '../tasks/tasks.sql.js';
import { sql as streamSql } from './stream.sql.js';
import type { Queryable } from '../../store/db.js';

export const CHANNEL = 'sightflow_video';
/** Payload announcing a new pending task (task ids never look like this). */
const NEW_TASK = '*new';

export class StreamHub {
  private readonly events = new EventEmitter();
  private listener: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly s: Services) {
    this.events.setMaxListeners(0);
  }

  /** Calls fn whenever bytes were appended to the task's archive or its state changed. */
  onTask(taskId: string, fn: () => void): () => void {
    void this.listen();
    this.events.on(taskId, fn);
    return () => { this.events.off(taskId, fn); };
  }

  onNewTask(fn: () => void): () => void {
    void this.listen();
    this.events.on(NEW_TASK, fn);
    return () => { this.events.off(NEW_TASK, fn); };
  }

  /** Inside the writing transaction: other processes hear about it once it commits. */
  async notifyIn(q: Queryable, taskId: string): Promise<void> {
    if (this.s.db.kind === 'postgres') await q.query(sql.notify, [CHANNEL, taskId]);
  }

  /** After the commit: this process's subscribers. */
  publish(taskId: string): void {
    this.events.emit(taskId);
  }

  async announceNewTask(): Promise<void> {
    this.events.emit(NEW_TASK);
    if (this.s.db.kind === 'postgres') await this.s.db.query(sql.notify, [CHANNEL, NEW_TASK]).catch(() => {});
  }

  private listen(): Promise<void> {
    if (this.closed || this.s.db.kind !== 'postgres' || !this.s.config.databaseUrl) return Promise.resolve();
    if (this.listener) return Promise.resolve();
    return (this.connecting ??= (async () => {
      const { default: pgMod } = await import('pg');
      const client = new pgMod.Client({ connectionString: this.s.config.databaseUrl });
      // A dropped connection is replaced on the next subscription; until then subscribers poll.
      const drop = () => { if (this.listener === client) this.listener = null; client.end().catch(() => {}); };
      client.on('error', drop);
      client.on('end', drop);
      client.on('notification', (n) => { if (n.payload) this.events.emit(n.payload); });
      try {
        await client.connect();
        await client.query(streamSql.listen);
        if (this.closed) { await client.end().catch(() => {}); return; }
        this.listener = client;
      } catch (e) {
        this.s.log.warn({ err: e }, 'video stream LISTEN connection failed; subscribers fall back to polling');
        await client.end().catch(() => {});
      }
    })().finally(() => { this.connecting = null; }));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting;
    const l = this.listener;
    this.listener = null;
    if (l) await l.end().catch(() => {});
    this.events.removeAllListeners();
  }
}

// One hub per database handle, shared by the routes, the worker and the reaper of a process (and by tests
// that run a worker of their own beside an app).
const hubs = new WeakMap<object, StreamHub>();

export function hubFor(s: Services): StreamHub {
  let h = hubs.get(s.db);
  if (!h) { h = new StreamHub(s); hubs.set(s.db, h); }
  return h;
}
