// Live stream fan-out: what a live task's readers cost its pipeline does not grow with their number. The
// pipeline archives each chunk once (stream-archive.ts) and hands the committed bytes to this process's hub;
// other processes hear of the append once per process (NOTIFY with the new end) and read the new rows once.
// Per live task with readers here, a process keeps one tail: the most recent archive bytes, at most
// `bufferBytes` (plus the newest append whatever its size). Readers are served from it, or, when they are
// further behind, from the archive (a few rows a read, a few reads at a time per process, identical reads
// shared), never by work an append waits for: a caught-up reader gets each append written to its socket
// at once; one whose socket is full gets nothing more until it drains, then catches up from the tail or
// the archive. A reader whose socket takes no byte for `stallMs` is cut off: its response ends cleanly at
// an event boundary (without `data: [DONE]`).
// Bounds per reader: one pending write (at most one slice of WRITE_SLICE or one append) beyond the kernel's
// socket buffer, plus, while it catches up and its socket takes bytes, one archive read (CATCH_UP_ROWS rows). docs/video.md, "Live readers", says what clients see.
import type { SseWriter } from '../../http/sse.js';
import type { Services } from '../../services/services.js';
import type { Logger } from '../../base/log.js';
import { sql } from '../tasks.sql.js';
import { TERMINAL_STATES, type TaskState } from '../task-contract.js';
import { DONE_EVENT } from './chunks.js';
import { StreamArchive } from './stream-archive.js';
import { hubFor, type Appended } from './stream-hub.js';
import type { EventIdWriter } from './event-ids.js';

/** Bytes handed to a socket per write while catching up (whole events; an event larger than this goes whole). */
export const WRITE_SLICE = 64 * 1024;
/** Archive rows per catch-up read (each row is one append). */
const CATCH_UP_ROWS = 32;
/** Catch-up reads of the archive in flight at once per process (the pipeline's appends queue behind them on PGlite). */
const MAX_ARCHIVE_READS = 4;

const DONE = Buffer.from(DONE_EVENT, 'utf8');
const endsDone = (b: Buffer) => b.length >= DONE.length && b.subarray(b.length - DONE.length).equals(DONE);

export interface FanoutSettings {
  bufferBytes: number;
  stallMs: number;
  pollMs: number;
}

export interface FanoutStats {
  /** Live tasks with readers here, and their readers. */
  tasks: number;
  readers: number;
  /** Bytes held in tails (the per-task buffers). */
  bufferedBytes: number;
  /** Archive reads: by catching-up readers, and by tails following appends made elsewhere. */
  catchUpReads: number;
  followReads: number;
  /** Readers cut off for taking no byte for stallMs. */
  cutOff: number;
}

class Reader {
  pos: number;
  /** A pump (catch-up or waiting for the socket) is running; appends leave this reader to it. */
  busy = false;
  /** The last send() found the socket over its watermark. */
  blocked = false;
  /** Archive bytes read ahead of the tail, not yet written. */
  batch: Buffer[] = [];
  constructor(
    readonly writer: SseWriter,
    start: number,
    readonly ids: EventIdWriter | null,
    readonly onEnd: () => void,
  ) {
    this.pos = start;
  }
}

class Tail {
  /** Archive offset of chunks[0]; end: offset after the last byte known here. */
  base = 0;
  end = 0;
  chunks: Buffer[] = [];
  offsets: number[] = [];
  bytes = 0;
  terminal = false;
  ready = false;
  following = false;
  /** A follow was asked for while one ran (or before the tail was ready). */
  again = false;
  readers = new Set<Reader>();
  /** This process's appends, written to readers on the next turn of the event loop. */
  queue: Appended[] = [];
  timer: NodeJS.Timeout | null = null;
  lastNews = Date.now();
  constructor(readonly id: string) {}

  add(from: number, b: Buffer, max: number): void {
    this.chunks.push(b);
    this.offsets.push(from);
    this.bytes += b.length;
    this.end = from + b.length;
    if (endsDone(b)) this.terminal = true;
    // The newest append stays whatever its size, so a reader at its start is served from here.
    while (this.chunks.length > 1 && this.bytes > max) {
      this.bytes -= this.chunks.shift()!.length;
      this.offsets.shift();
    }
    this.base = this.offsets[0]!;
  }

  /** Whole appends from `pos` (the first sliced to start there) up to about `max` bytes; empty when pos is not held here. */
  slice(pos: number, max: number): Buffer[] {
    if (pos < this.base || pos >= this.end) return [];
    let i = this.offsets.length - 1;
    while (this.offsets[i]! > pos) i--;
    const out: Buffer[] = [];
    let n = 0;
    for (; i < this.chunks.length && (n === 0 || n + this.chunks[i]!.length <= max); i++) {
      const c = this.chunks[i]!;
      const b = out.length === 0 ? c.subarray(pos - this.offsets[i]!) : c;
      out.push(b);
      n += b.length;
    }
    return out;
  }
}

export class StreamFanout {
  private readonly tails = new Map<string, Tail>();
  private readonly archive: StreamArchive;
  private readonly log: Logger;
  private readonly offAppend: () => void;
  private readonly reads = new Map<string, Promise<Buffer[]>>();
  private readsInFlight = 0;
  private readonly readQueue: Array<() => void> = [];
  private counters = { catchUpReads: 0, followReads: 0, cutOff: 0 };
  private closed = false;

  constructor(
    private readonly s: Services,
    readonly settings: FanoutSettings,
  ) {
    const hub = hubFor(s);
    this.archive = new StreamArchive(s, hub);
    this.log = s.log;
    this.offAppend = hub.onAppend((taskId, end, appended) => this.heard(taskId, end, appended));
  }

  stats(): FanoutStats {
    let readers = 0,
      bufferedBytes = 0;
    for (const t of this.tails.values()) {
      readers += t.readers.size;
      bufferedBytes += t.bytes;
    }
    return { tasks: this.tails.size, readers, bufferedBytes, ...this.counters };
  }

  /**
   * Serves a live task's archive from byte `start` to `writer` until the task's terminal bytes are written
   * (then the response ends), the client goes, or it is cut off. `onEnd` runs once when this reader is done.
   */
  join(taskId: string, writer: SseWriter, start: number, ids: EventIdWriter | null, onEnd: () => void): void {
    let t = this.tails.get(taskId);
    if (!t) {
      t = new Tail(taskId);
      this.tails.set(taskId, t);
      this.startTail(t);
    }
    const r = new Reader(writer, start, ids, onEnd);
    t.readers.add(r);
    const tail = t;
    writer.onAbort(() => this.drop(tail, r, 'gone'));
    if (t.ready) this.pump(t, r);
  }

  close(): void {
    this.closed = true;
    this.offAppend();
    for (const t of this.tails.values()) {
      for (const r of t.readers) this.drop(t, r, 'end');
      if (t.timer) clearInterval(t.timer);
    }
    this.tails.clear();
  }

  // ---- the tail: what this process knows of a live task's archive ----

  private startTail(t: Tail): void {
    t.timer = setInterval(() => {
      if (Date.now() - t.lastNews >= this.settings.pollMs) void this.follow(t, null);
    }, this.settings.pollMs);
    t.timer.unref();
    void (async () => {
      try {
        // The recent bytes (about bufferBytes) come from the archive once, for every reader that joins.
        const [st] = await this.s.db.query(sql.streamState, [t.id]);
        const end = Number(st?.stream_bytes ?? 0);
        const from = Math.max(0, end - this.settings.bufferBytes);
        let pos = from;
        t.base = t.end = from;
        for (;;) {
          const rows = await this.archive.readRows(t.id, pos, 1024);
          this.counters.followReads++;
          if (rows.length === 0) break;
          for (const b of rows) {
            t.add(pos, b, this.settings.bufferBytes);
            pos += b.length;
          }
          if (rows.length < 1024) break;
        }
        if (!st || TERMINAL_STATES.includes(st.status as TaskState)) {
          // A terminal task's bytes were all stored with its state: the archive ends here.
          if (pos >= end) t.terminal = true;
        }
      } catch (e) {
        this.log.warn({ err: e, taskId: t.id }, 'video stream fan-out could not read the archive');
      }
      t.ready = true;
      for (const r of t.readers) this.pump(t, r);
      if (t.again && !t.terminal) void this.follow(t, null);
    })();
  }

  /** An append or state change from the hub: the bytes themselves (this process's appends) or a wake-up. */
  private heard(taskId: string, end: number | null, appended: Appended | null): void {
    const t = this.tails.get(taskId);
    if (!t) return;
    t.lastNews = Date.now();
    if (!t.ready) {
      t.again = true;
      return;
    }
    if (appended) {
      // The committing append only queues its bytes: the writes to readers run after it has moved on.
      t.queue.push(appended);
      if (t.queue.length === 1) setImmediate(() => this.flush(t));
      return;
    }
    const last = t.queue.at(-1);
    if (end !== null && end <= Math.max(t.end, last ? last.from + last.bytes.length : 0)) return;
    void this.follow(t, end);
  }

  private flush(t: Tail): void {
    const queued = t.queue;
    t.queue = [];
    for (const a of queued) {
      if (a.from + a.bytes.length <= t.end) continue;
      if (a.from === t.end) this.append(t, a.from, a.bytes);
      else {
        void this.follow(t, null);
        return;
      }
    }
  }

  /** Reads what the archive has past the tail's end (once per process, however many readers wait). */
  private async follow(t: Tail, until: number | null): Promise<void> {
    if (this.closed || t.terminal || !t.ready) return;
    if (t.following) {
      t.again = true;
      return;
    }
    t.following = true;
    try {
      do {
        t.again = false;
        let end = until;
        let terminal = false;
        if (end === null) {
          const [st] = await this.s.db.query(sql.streamState, [t.id]);
          end = Number(st?.stream_bytes ?? 0);
          terminal = !st || TERMINAL_STATES.includes(st.status as TaskState);
        }
        until = null;
        while (t.end < end && !t.terminal) {
          const from = t.end;
          const rows = await this.archive.readRows(t.id, from, 256);
          this.counters.followReads++;
          if (rows.length === 0) break;
          let pos = from;
          for (const b of rows) {
            // Appends of this process may have arrived while the read ran.
            if (pos + b.length > t.end) this.append(t, pos, pos < t.end ? b.subarray(t.end - pos) : b);
            pos += b.length;
          }
        }
        if (terminal && t.end >= end && !t.terminal) {
          t.terminal = true;
          this.broadcastEnd(t);
        }
      } while (t.again && !t.terminal && !this.closed);
    } catch (e) {
      this.log.warn({ err: e, taskId: t.id }, 'video stream fan-out could not follow the archive');
    } finally {
      t.following = false;
    }
  }

  /** New bytes at the tail's end: into the buffer, and to every caught-up reader's socket now. */
  private append(t: Tail, from: number, bytes: Buffer): void {
    t.add(from, bytes, this.settings.bufferBytes);
    t.lastNews = Date.now();
    for (const r of t.readers) {
      if (r.busy) continue;
      if (r.pos < from) {
        this.pump(t, r);
        continue;
      }
      if (r.pos >= t.end) continue;
      this.send(t, r, r.pos === from ? bytes : bytes.subarray(r.pos - from));
      if (r.blocked) this.pump(t, r);
    }
    if (t.terminal) this.broadcastEnd(t);
  }

  /** The tail learnt that the task is over (from its state): caught-up readers end. */
  private broadcastEnd(t: Tail): void {
    for (const r of t.readers) if (!r.busy && r.pos >= t.end) this.drop(t, r, 'end');
  }

  // ---- readers ----

  private send(t: Tail, r: Reader, bytes: Buffer): void {
    const ok = r.writer.send(r.ids ? r.ids.transform(bytes) : bytes);
    r.pos += bytes.length;
    r.blocked = !ok;
  }

  /** Brings a reader up to the tail's end: from the buffer, else the archive; waits while its socket is full. */
  private pump(t: Tail, r: Reader): void {
    if (r.busy) return;
    r.busy = true;
    void (async () => {
      try {
        for (;;) {
          if (r.writer.closed) return this.drop(t, r, 'gone');
          if (r.blocked) {
            // A reader waiting for its socket holds nothing but its one pending write: it reads again after.
            r.batch = [];
            if (!(await this.drained(r))) return this.cutOff(t, r);
            r.blocked = false;
            continue;
          }
          let parts = r.batch.length ? takeSlice(r.batch) : t.slice(r.pos, WRITE_SLICE);
          if (parts.length === 0 && r.pos < t.end) {
            // Behind the buffer: the archive (a few rows; readers at the same offset share the read).
            r.batch = await this.readArchive(t.id, r.pos);
            if (r.writer.closed) return this.drop(t, r, 'gone');
            if (r.batch.length === 0) {
              await new Promise((res) => setTimeout(res, 50));
              continue;
            }
            parts = takeSlice(r.batch);
          }
          if (parts.length > 0) {
            this.send(t, r, parts.length === 1 ? parts[0]! : Buffer.concat(parts));
            continue;
          }
          // Caught up (or ahead of the tail): appends are written to this reader as they come.
          if (t.terminal) return this.drop(t, r, 'end');
          r.busy = false;
          return;
        }
      } catch (e) {
        this.log.warn({ err: e, taskId: t.id }, 'video stream reader failed');
        this.drop(t, r, 'end');
      }
    })();
  }

  /** True once the reader's socket takes bytes again; false when it took none for stallMs. */
  private async drained(r: Reader): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const stalled = await Promise.race([
      r.writer.drained().then(() => false),
      new Promise<boolean>((res) => {
        timer = setTimeout(() => res(true), this.settings.stallMs);
      }),
    ]);
    clearTimeout(timer);
    return !stalled || r.writer.closed;
  }

  private cutOff(t: Tail, r: Reader): void {
    this.counters.cutOff++;
    this.log.info(
      { taskId: t.id, offset: r.pos, stallMs: this.settings.stallMs },
      'video stream reader took no bytes for the stall limit; cut off',
    );
    // The end of the response waits behind the one write the socket holds: a client that reads again gets
    // an event boundary and the end; one that never does is closed by the server's idle timeout.
    this.drop(t, r, 'end');
  }

  private drop(t: Tail, r: Reader, how: 'end' | 'gone'): void {
    if (!t.readers.delete(r)) return;
    r.batch = [];
    if (how === 'end') r.writer.end();
    r.onEnd();
    if (t.readers.size === 0 && this.tails.get(t.id) === t) {
      this.tails.delete(t.id);
      if (t.timer) clearInterval(t.timer);
    }
  }

  private async readArchive(taskId: string, from: number): Promise<Buffer[]> {
    const key = `${taskId}@${from}`;
    let p = this.reads.get(key);
    if (!p) {
      p = (async () => {
        if (this.readsInFlight >= MAX_ARCHIVE_READS) await new Promise<void>((res) => this.readQueue.push(res));
        this.readsInFlight++;
        try {
          this.counters.catchUpReads++;
          return await this.archive.readRows(taskId, from, CATCH_UP_ROWS);
        } finally {
          this.readsInFlight--;
          this.readQueue.shift()?.();
        }
      })().finally(() => this.reads.delete(key));
      this.reads.set(key, p);
    }
    return [...(await p)];
  }
}

/** Takes whole rows off the front of `batch`, up to about WRITE_SLICE bytes (at least one). */
function takeSlice(batch: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  let n = 0;
  while (batch.length > 0 && (n === 0 || n + batch[0]!.length <= WRITE_SLICE)) {
    const b = batch.shift()!;
    out.push(b);
    n += b.length;
  }
  return out;
}

// One fan-out per database handle, like the hub: the routes of a process share it.
const fanouts = new WeakMap<object, StreamFanout>();

export function fanoutFor(s: Services, settings: FanoutSettings): StreamFanout {
  let f = fanouts.get(s.db);
  if (!f) {
    f = new StreamFanout(s, settings);
    fanouts.set(s.db, f);
  }
  return f;
}
