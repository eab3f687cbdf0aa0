// A video provider for the MQTT tests and bench: people that cross the vertical line x = 320 of a 640 x 480
// frame, `ins` of them right to left (an analytics line from (320, 0) to (320, 480) counts them `in`) and then
// `outs` left to right, one after another with a short overlap, each walking 12 sampled frames at y = 300;
// every third one is a dog. The source URL's query shapes a run: ?ins=I&outs=O&frame_ms=M (defaults 12, 9,
// 10). Frames carry `received_at_ms` as a live source's do, so a subscriber can time an event's way from a
// frame's arrival.
import type {
  FrameOutput,
  ProviderContext,
  ProviderResult,
  VideoProvider,
  VideoTaskRequest,
} from '../../src/video/task-contract.js';
import { abortableSleep as sleep } from './abortable-sleep.js';
import { runResult } from './synthetic-provider.js';

const WALK = 12;
const EVERY = 8;

/** The people in sampled frame `i` of a run with `ins` then `outs` crossings: [track id, class, x]. */
export function walkersAt(i: number, ins: number, outs: number): Array<[number, string, number]> {
  const out: Array<[number, string, number]> = [];
  for (let k = 0; k < ins + outs; k++) {
    const step = i - k * EVERY;
    if (step < 0 || step >= WALK) continue;
    const [from, to] = k < ins ? [420, 220] : [220, 420];
    out.push([k + 1, (k + 1) % 3 === 0 ? 'dog' : 'person', from + ((to - from) * step) / (WALK - 1)]);
  }
  return out;
}

export function crossingFrames(ins: number, outs: number): number {
  return (ins + outs - 1) * EVERY + WALK + 6;
}

export class CrossingProvider implements VideoProvider {
  readonly name = 'crossing';

  async run(
    _request: VideoTaskRequest,
    source: { path?: string; url?: string },
    ctx: ProviderContext,
  ): Promise<ProviderResult> {
    const q = source.url ? new URL(source.url).searchParams : new URLSearchParams();
    const n = (k: string, def: number) => (q.has(k) ? Number(q.get(k)) : def);
    const ins = n('ins', 12),
      outs = n('outs', 9),
      frameMs = n('frame_ms', 10);
    const frames = crossingFrames(ins, outs);
    const started = Date.now();
    let last: FrameOutput['stream_info'] = {
      frame_index: 0,
      total_frames: null,
      decoded_frames: 0,
      dropped_frames: 0,
      fps: 10,
      elapsed_ms: 0,
    };
    let emitted = 0;
    for (let i = 0; i < frames && !ctx.signal.aborted; i++) {
      last = {
        frame_index: i,
        total_frames: null,
        decoded_frames: i + 1,
        dropped_frames: 0,
        fps: 10,
        elapsed_ms: Date.now() - started,
        stream_time_ms: i * 100,
        received_at_ms: Date.now(),
        live: true,
      };
      const frame: FrameOutput = {
        stream_info: last,
        delta: {
          results: [
            {
              index: 0,
              targets: walkersAt(i, ins, outs).map(([id, cls, x]) => ({
                track_id: id,
                class: cls,
                confidence: 0.9,
                roi: { left: x - 10, top: 260, width: 20, height: 40 },
              })),
            },
          ],
        },
        frame_size: { width: 640, height: 480 },
      };
      if (!(await ctx.emit(frame))) break;
      emitted++;
      await sleep(frameMs, ctx.signal);
    }
    return runResult('stop', last, emitted, started);
  }
}

/** The analytics line these walkers cross: from (320, 0) to (320, 480), right to left is `in`. */
export const doorLine = () => ({
  id: 'door',
  points: [
    [320, 0],
    [320, 480],
  ],
});

/** A zone left of the door line that the `out` walkers enter; `classes`: which ones it counts (all without). */
export const hallZone = (classes?: string[]) => ({
  id: 'hall',
  polygon: [
    [0, 200],
    [300, 200],
    [300, 400],
    [0, 400],
  ],
  ...(classes ? { classes } : {}),
});

/** Analytics rules for these walkers: the door line and the hall zone. */
export const crossingRules = (classes?: string[]) => ({ lines: [doorLine()], zones: [hallZone(classes)] });
