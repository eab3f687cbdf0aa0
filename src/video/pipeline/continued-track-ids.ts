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
}
