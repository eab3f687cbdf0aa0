// Wake-ups for stream subscribers and idle workers. Within a process an EventEmitter, and the appended bytes
// themselves for the stream fan-out (stream-fanout.ts); across processes (PostgreSQL) LISTEN on one
// dedicated connection per process, fed by pg_notify in the appending transaction with the archive's new
// end (`<task id> <end>`), so every process hears of every append once, however many readers it serves. A
// notification only says "look again": a lost one costs a poll interval, never bytes.
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Services } from '../../services/services.js';
import { sql } from '../tasks.sql.js';
import { sql as streamSql } from './stream.sql.js';
import type { Queryable } from '../../store/db.js';

export const CHANNEL = 'sightflow_video';
/** Payload announcing a new pending task (task ids never look like this). */
const NEW_TASK = '*new';

/** Bytes an append of this process committed at archive offset `from`. */
export interface Appended {
  from: number;
  bytes: Buffer;
}
/** Told of every append or state change: `end` is the archive's end when known, `appended` its bytes when committed here. */
export type AppendListener = (taskId: string, end: number | null, appended: Appended | null) => void;

export class StreamHub {
  private readonly events = new EventEmitter();
  private listener: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;
  private readonly appendListeners = new Set<AppendListener>();

  constructor(private readonly s: Services) {
    this.events.setMaxListeners(0);
  }

  /** Calls fn whenever bytes were appended to the task's archive (with its new end when known) or its state changed. */
  onTask(taskId: string, fn: (end: number | null) => void): () => void {
    void this.listen();
    this.events.on(taskId, fn);
    return () => {
      this.events.off(taskId, fn);
    };
  }

  /** Calls fn for every task's appends and state changes (one listener for all tasks: the fan-out). */
  onAppend(fn: AppendListener): () => void {
    void this.listen();
    this.appendListeners.add(fn);
    return () => {
      this.appendListeners.delete(fn);
    };
  }

  onNewTask(fn: () => void): () => void {
    void this.listen();
    this.events.on(NEW_TASK, fn);
    return () => {
      this.events.off(NEW_TASK, fn);
    };
  }

  /** Inside the writing transaction: other processes hear about it once it commits (with the new end after appends). */
  async notifyIn(q: Queryable, taskId: string, end?: number): Promise<void> {
    const args = this.notifyArgs(taskId, end);
    if (args) await q.query(sql.notify, args);
  }

  /** pg_notify's channel (null on PGlite: no other process to tell). */
  notifyChannel(): string | null {
    return this.s.db.kind === 'postgres' ? CHANNEL : null;
  }

  /** pg_notify's channel and payload for a change to a task (null on PGlite: no other process to tell). */
  notifyArgs(taskId: string, end?: number): [string, string] | null {
    return this.s.db.kind === 'postgres' ? [CHANNEL, end === undefined ? taskId : `${taskId} ${end}`] : null;
  }

  /** After the commit: this process's subscribers, with the bytes when the commit appended some. */
  publish(taskId: string, appended?: Appended): void {
    this.dispatch(taskId, appended ? appended.from + appended.bytes.length : null, appended ?? null);
  }

  private dispatch(taskId: string, end: number | null, appended: Appended | null): void {
    for (const fn of this.appendListeners) fn(taskId, end, appended);
    this.events.emit(taskId, end);
  }

  private notified(payload: string): void {
    if (payload === NEW_TASK) {
      this.events.emit(NEW_TASK);
      return;
    }
    const sp = payload.indexOf(' ');
    if (sp < 0) return this.dispatch(payload, null, null);
    const end = Number(payload.slice(sp + 1));
    this.dispatch(payload.slice(0, sp), Number.isSafeInteger(end) ? end : null, null);
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
      const drop = () => {
        if (this.listener === client) this.listener = null;
        client.end().catch(() => {});
      };
      client.on('error', drop);
      client.on('end', drop);
      client.on('notification', (n) => {
        if (n.payload) this.notified(n.payload);
      });
      try {
        await client.connect();
        await client.query(streamSql.listen);
        if (this.closed) {
          await client.end().catch(() => {});
          return;
        }
        this.listener = client;
      } catch (e) {
        this.s.log.warn({ err: e }, 'video stream LISTEN connection failed; subscribers fall back to polling');
        await client.end().catch(() => {});
      }
    })().finally(() => {
      this.connecting = null;
    }));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting;
    const l = this.listener;
    this.listener = null;
    if (l) await l.end().catch(() => {});
    this.events.removeAllListeners();
    this.appendListeners.clear();
  }
}

// One hub per database handle, shared by the routes, the worker and the reaper of a process (and by tests
// that run a worker of their own beside an app).
const hubs = new WeakMap<object, StreamHub>();

export function hubFor(s: Services): StreamHub {
  let h = hubs.get(s.db);
  if (!h) {
    h = new StreamHub(s);
    hubs.set(s.db, h);
  }
  return h;
}
