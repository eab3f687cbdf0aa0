// A task's tracked boxes as stored, read in stream order without decoding the video: the compact track log of
// a finished task with an analytics step (track-log.ts) when it is whole, else its archived frame chunks
// (the terminal chunk has no targets of its own). Read by the recount and the heatmap, for a finished task
// or a running one (up to the chunks archived so far).
import type { Queryable } from '../../store/db.js';
import type { StreamArchive } from '../stream/stream-archive.js';
import { sql } from './analytics.sql.js';
import type { AnalyticsFrame } from './engine.js';
import { analyticsFrame } from './task-analytics.js';
import { readTrackBlock } from './track-log.js';

/** Archive rows read per query. */
const READ_ROWS = 2048;
/** Log blocks read per query (each up to 256 frames or 2 MB). */
const READ_BLOCKS = 8;

export type TrackSource = 'track_log' | 'archive';

/** Calls `fn` with each stored frame (`width`, `height`: the frame size to stamp on it). */
export async function forEachStoredFrame(
  db: Queryable,
  archive: StreamArchive,
  taskId: string,
  width: number,
  height: number,
  fn: (f: AnalyticsFrame) => void,
): Promise<{ frames: number; source: TrackSource }> {
  const [log] = await db.query(sql.trackLog, [taskId]);
  const promised = log?.track_log_frames;
  // Whole: the worker finished it, and its blocks are 0..n-1 holding exactly the frames it promised.
  if (
    promised !== null &&
    promised !== undefined &&
    Number(log!.frames) === Number(promised) &&
    (Number(log!.blocks) === 0 || Number(log!.last_seq) === Number(log!.blocks) - 1)
  ) {
    let frames = 0;
    for (let seq = 0; ; ) {
      const rows = await db.query(sql.readTracks, [taskId, seq, READ_BLOCKS]);
      for (const r of rows) frames += readTrackBlock(r.classes as string[], r.bytes as Uint8Array, width, height, fn);
      if (rows.length < READ_BLOCKS) break;
      seq = Number(rows.at(-1)!.seq) + 1;
    }
    return { frames, source: 'track_log' };
  }
  let frames = 0,
    offset = 0;
  for (;;) {
    // Every row is whole events, so a read of whole rows ends on an event boundary.
    const { bytes } = await archive.read(taskId, offset, READ_ROWS);
    if (bytes.length === 0) break;
    offset += bytes.length;
    for (const ev of bytes.toString('utf8').split('\n\n')) {
      if (!ev.startsWith('data: {') || !ev.includes('"finish_reason":null')) continue;
      fn(analyticsFrame(JSON.parse(ev.slice(6)), width, height));
      frames++;
    }
  }
  return { frames, source: 'archive' };
}
