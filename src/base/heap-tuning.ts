// V8's heap limit for a server that handles images. After each full collection V8 sets the old generation's
// limit to its live size times a growing factor; for sightflow's small live heap that left less room than
// the young generation V8 compares it with, so V8 started the next full marking at once, its marking on
// every core and its CPU taken from the model's threads. A factor of 2 leaves the room that comparison
// wants: under image load full collections come several times less often, the heap's size the same, and a
// `sightflow serve` process on detect made more images/s (docs/capacity.md, "Heap growing factor"). A process
// with a larger live heap (the serve bench, which also holds its ceiling's runtimes) has the room anyway and
// shows no difference.
// The flag is read at each collection, so setting it when the services open is in time.
import { setFlagsFromString } from 'node:v8';

let applied: number | null = null;

/** Sets V8's heap growing factor to (1 + percent / 100) for this process; 0 leaves V8's own. Once per value. */
export function tuneHeap(percent: number): void {
  if (percent <= 0 || applied === percent) return;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  applied = percent;
}
