// What a moment is as a vector item's metadata: the video index step (video/moments/) writes it on every item it
// adds to a collection, and moment search (vectors/moment-search.ts) reads it back to say where a hit is in the
// video and in the task's result stream (docs/moments.md). Both features import this one type, neither imports
// the other.

/** The metadata of an item the index step wrote: a segment of the video or one track in it. */
export type MomentMetadata = {
  task_id: string;
  /** The input's video id (the step's video_id, else the task id). */
  video: string;
  kind: 'segment' | 'track';
  start_ms: number;
  end_ms: number;
  /** Byte offset in the task's result stream where the moment's chunks begin. */
  stream_offset: number;
  /** Live inputs: when the moment's first frame was received (unix epoch ms). */
  wall_start_ms?: number;
  /** Segments: the shot it belongs to, its frames, the classes and text seen in it. */
  shot?: number;
  first_frame?: number;
  last_frame?: number;
  classes?: string[];
  text?: string;
  /** Tracks: the track, its class and dominant colour. */
  track_id?: number;
  class?: string;
  colour?: string;
  /** Rules crossed or entered while it lasted, to show, and as one key per rule for the collection's filters. */
  lines?: string[];
  zones?: string[];
  [rule: `line:${string}` | `zone:${string}`]: true;
};

/** The moment an item's metadata describes, or null when the item is not an index step's. */
export function momentMetadataOf(m: Record<string, unknown>): MomentMetadata | null {
  const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  if (typeof m.task_id !== 'string' || typeof m.video !== 'string' || (m.kind !== 'segment' && m.kind !== 'track'))
    return null;
  if (!num(m.start_ms) || !num(m.end_ms) || !num(m.stream_offset)) return null;
  return m as unknown as MomentMetadata;
}
