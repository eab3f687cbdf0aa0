// V8's heap limit for a server that handles images. After each full collection V8 sets the old generation's
// limit to its live size times a growing factor; for sightflow's small live heap (~55 MB) that left about
// 28 MB of room, less than the young generation V8 compares it with, so V8 started the next full marking at
// once: a full collection every ~0.35 s under 4 image clients, its marking on every core (a 2-core machine
// spent ~9% of its CPU there, taken from the model's threads). A factor of 2 leaves the room that comparison
// wants: under that load a full collection every ~1.6 s (over a whole 30 s run 22-23 against 45-52), the
// heap's size the same (~100 MB). A `sightflow serve` process with 4 C clients on detect (two A/B pairs,
// 2 x 10 s each): 37.2-37.7 images/s against 34.3-36.3 with V8's factor. A process with a larger live heap
// (the serve bench, which also holds its ceiling's runtimes) has the room anyway and shows no difference.
// The flag is read at each collection, so setting it when the services open is in time.
import { setFlagsFromString } from 'node:v8';

let applied: number | null = null;

/** Sets V8's heap growing factor to (1 + percent / 100) for this process; 0 leaves V8's own. Once per value. */
export function tuneHeap(percent: number): void {
  if (percent <= 0 || applied === percent) return;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  applied = percent;
}
