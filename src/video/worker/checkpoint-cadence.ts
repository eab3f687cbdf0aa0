// When a file task stores its checkpoint. Storing one with every chunk would double what each append writes
// (a checkpoint of 50 live tracks is larger than the chunk itself), so it is stored with every
// `checkpointChunks`th chunk, or sooner once `checkpointMs` passed since the last: a slow pipeline then stores
// one with every chunk (its appends are a small part of its time), a fast one every few. A worker that
// continues the task from it processes the frames archived after it again (CatchUp), which costs at most
// those few frames, or about `checkpointMs` of processing (docs/video.md, "What a checkpoint costs").
import { ProviderError, type FrameOutput } from '../task-contract.js';

export class CheckpointCadence {
  #since: number;
  #at = performance.now();

  /** `since`: chunks archived after the stored checkpoint (none stored yet: the first chunk stores one). */
  constructor(
    private readonly chunks: number,
    private readonly ms: number,
    since = Number.POSITIVE_INFINITY,
  ) {
    this.#since = since;
  }

  /** Whether the next chunk should store a checkpoint. */
  due(): boolean {
    return this.#since + 1 >= this.chunks || performance.now() - this.#at >= this.ms;
  }

  /** A chunk was archived: with a checkpoint of its own (true) or keeping the stored one. */
  archived(stored: boolean): void {
    if (!stored) {
      this.#since++;
      return;
    }
    this.#since = 0;
    this.#at = performance.now();
  }
}

type Archived = Pick<FrameOutput, 'stream_info' | 'delta' | 'analytics'>;

/** What the provider's tracking made of a frame (the fields analytics adds to a target, speed_kmh, left out). */
const trackedOf = (f: Archived): string =>
  JSON.stringify(
    f.delta.results.map((r) => r.targets.map((t) => [t.track_id, t.class, t.confidence, t.roi, t.attributes, t.text])),
  );

/**
 * The frames a continued file task processes again: those archived after the chunk its checkpoint was stored
 * with. Its provider decodes and tracks them as the dead worker did, and in place of each one's output it gets
 * the archived one (what that worker's analytics added included, for the steps' chunk hooks), which is not
 * archived again. A frame that is not the archived one (another index) means the input or decoder differ:
 * the task fails `resume_mismatch`.
 */
export class CatchUp {
  readonly #frames: Archived[] = [];
  readonly #given = new WeakSet<FrameOutput>();
  #seen = 0;
  /** Frames processed again whose targets differ from the archived ones (inference that is not bit-exact). */
  differing = 0;

  /** `from`: the chunks archived up to and including the checkpoint's. */
  constructor(private readonly from: number) {}

  /** Each archived frame, in order, as the archive is replayed. */
  add(frame: Archived): void {
    if (this.#seen++ >= this.from)
      this.#frames.push({ stream_info: frame.stream_info, delta: frame.delta, analytics: frame.analytics });
  }

  /** Frames still to be processed again. */
  get pending(): number {
    return this.#frames.length;
  }

  /** The archived output for the next frame processed again (`made`, the provider's own output for it). */
  take(made: FrameOutput): FrameOutput {
    const a = this.#frames.shift();
    if (!a) throw new Error('no frame left to process again');
    if (a.stream_info.frame_index !== made.stream_info.frame_index)
      throw new ProviderError(
        'local',
        `The task cannot continue: frame ${made.stream_info.frame_index} was decoded where the archive has frame ` +
          `${a.stream_info.frame_index}`,
        undefined,
        'resume_mismatch',
      );
    if (trackedOf(a) !== trackedOf(made)) this.differing++;
    const out: FrameOutput = { stream_info: a.stream_info, delta: a.delta };
    if (a.analytics) out.analytics = a.analytics;
    if (made.frame_size) out.frame_size = made.frame_size;
    this.#given.add(out);
    return out;
  }

  /** Whether `out` is an archived frame take() handed back (emit stores nothing for it). */
  gave(out: FrameOutput): boolean {
    return this.#given.has(out);
  }
}
