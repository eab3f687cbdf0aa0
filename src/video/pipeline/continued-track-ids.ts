// Task-wide track ids that can continue a task another worker began (docs/video.md, "When a worker dies"):
// the ids start above every id the task handed out before (its checkpoint's next_track_id), so no id is
// ever given to two tracks, and `next` says where a later worker must start in turn.
import { TrackIds } from './target-tracker.js';

export class ContinuedTrackIds extends TrackIds {
  #next: number;

  /** `first`: the lowest id this run may hand out (1 for a task's first run). */
  constructor(private readonly first = 1) {
    super();
    this.#next = first;
  }

  override global(step: number, local: number): number {
    // TrackIds numbers from 1 in the order tracks start; shifted, the order and uniqueness stay.
    const id = super.global(step, local) + this.first - 1;
    if (id >= this.#next) this.#next = id + 1;
    return id;
  }

  /** Above every id handed out so far. */
  get next(): number {
    return this.#next;
  }

  /** The ids' state, for a file task another worker continues with the same ids (FramePipeline.snapshot()). */
  override snapshot(): { ids: unknown; first: number; next: number } {
    return { ids: super.snapshot(), first: this.first, next: this.#next };
  }

  /** Into a fresh instance made with the same `first`; throws when the state is not one of snapshot()'s. */
  override restore(s: unknown): void {
    const v = s as { ids?: unknown; first?: unknown; next?: unknown } | null;
    if (!v || v.first !== this.first || typeof v.next !== 'number' || !Number.isInteger(v.next) || v.next < this.first)
      throw new Error('The checkpoint holds track ids of another kind');
    super.restore(v.ids);
    this.#next = v.next;
  }
}
