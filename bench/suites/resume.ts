// `npm run bench -- resume [--quick] [--json]`: what a file decoder's resume (DecodeOptions.resume) costs when a
// video task continues on another worker. For a cursor near the end of each file (1 fps sampling), the time from
// open(resume) to the first frame after the cursor, beside the peer: open() without resume and reading up to
// that same frame (what a worker without cursors would do). Also the replay fallback, for the last cursor before
// the file's last key frame, altered to name that key frame: the seek lands past its frame. Files: a generated 720p H.264 clip with B-frames (a key frame
// every 10 s, x264's default) and tracking/vtest_PETS09-S2L1_full/vtest.avi from the evaluation data (no
// presentation times, four key frames in 795 frames). Ratio = peer / resume; the JSON line has the smallest.
import { join } from 'node:path';
import { VideoDecoder, type DecoderCursor } from '../../src/video/source/decoder.js';
import type { DecodeOptions } from '../../src/native/decode.js';
import { evalDir, skipWithoutEvalData } from '../../eval/dir.js';
import { makeMedia } from '../../test/helpers/media.js';

interface Result {
  file: string;
  frames: number;
  index: number;
  /** The replay's cursor's frame index. */
  replayIndex: number;
  /** Milliseconds to the first frame after the cursor: min and max over the repeats. */
  resume: [number, number];
  peer: [number, number];
  replay: [number, number];
  ratio: number;
}

const options: DecodeOptions = { sampling: { mode: 'fps', value: 1 }, maxFrames: 1e9, threads: 2 };

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/** The cursors of every sampled frame. */
async function cursors(path: string): Promise<DecoderCursor[]> {
  const d = await VideoDecoder.open(path, options);
  const out: DecoderCursor[] = [];
  for await (const f of d.frames(4, true)) if (f.cursor) out.push(f.cursor);
  await d.close();
  return out;
}

/** Open with `resume` and read the first frame after it; checks the frame and how the cursor's was found. */
async function resumed(path: string, resume: DecoderCursor, want: number, by: 'seek' | 'replay'): Promise<number> {
  const t0 = process.hrtime.bigint();
  const d = await VideoDecoder.open(path, { ...options, resume });
  const { frames } = await d.read(1);
  const took = ms(t0);
  await d.close();
  if (frames[0]?.index !== want) throw new Error(`resume gave index ${frames[0]?.index}, expected ${want}`);
  if (d.info.resumedBy !== by) throw new Error(`resumed by ${d.info.resumedBy}, expected ${by}`);
  return took;
}

/** Open without resume and read up to the same frame. */
async function fromStart(path: string, want: number): Promise<number> {
  const t0 = process.hrtime.bigint();
  const d = await VideoDecoder.open(path, options);
  let took = Number.NaN;
  for await (const f of d.frames(4, true)) {
    if (f.index >= want) {
      took = ms(t0);
      break;
    }
  }
  await d.close();
  return took;
}

export async function run({ quick, json }: { quick: boolean; json: boolean; args: string[] }): Promise<void> {
  if (skipWithoutEvalData({ json }, 'tracking/vtest_PETS09-S2L1_full/vtest.avi')) return;
  const seconds = quick ? 12 : 60;
  const repeats = quick ? 1 : 5;
  const files = [
    await makeMedia(`bench_720p_bframes_${seconds}s.mp4`, [
      ...['-f', 'lavfi', '-i', `testsrc2=size=1280x720:rate=25:duration=${seconds}`],
      ...['-c:v', 'libx264', '-preset', 'veryfast', '-bf', '3', '-g', '250', '-pix_fmt', 'yuv420p'],
    ]),
    join(evalDir('tracking/vtest_PETS09-S2L1_full'), 'vtest.avi'),
  ];
  const results: Result[] = [];
  for (const file of files) {
    const all = await cursors(file);
    // Near the end: the third sampled frame from the last, so there is a frame after it to wait for.
    const at = all[all.length - 3]!;
    const want = all[all.length - 2]!.index;
    const lastKey = Math.max(...all.map((c) => c.keyTs));
    const before = all.findLastIndex((c, i) => c.keyTs < lastKey && i < all.length - 1);
    const late = { ...all[before]!, keyTs: lastKey };
    const lateWant = all[before + 1]!.index;
    const times = { resume: [] as number[], peer: [] as number[], replay: [] as number[] };
    await resumed(file, at, want, 'seek'); // warm the page cache and the addon
    for (let i = 0; i < repeats; i++) {
      // Interleaved so all three see the same machine load.
      times.resume.push(await resumed(file, at, want, 'seek'));
      times.peer.push(await fromStart(file, want));
      times.replay.push(await resumed(file, late, lateWant, 'replay'));
    }
    const span = (v: number[]): [number, number] => [round(Math.min(...v)), round(Math.max(...v))];
    const r: Result = {
      file: file.split('/').pop() ?? file,
      frames: all.length,
      index: at.index,
      replayIndex: late.index,
      resume: span(times.resume),
      peer: span(times.peer),
      replay: span(times.replay),
      ratio: round(Math.min(...times.peer) / Math.min(...times.resume)),
    };
    results.push(r);
    console.log(
      `${r.file}: resume after index ${r.index} (sample ${all.length - 2} of ${all.length}), first frame after it in ` +
        `${r.resume[0]}-${r.resume[1]} ms; open + read to it ${r.peer[0]}-${r.peer[1]} ms (ratio ${r.ratio}x); ` +
        `replay fallback after index ${r.replayIndex} ${r.replay[0]}-${r.replay[1]} ms`,
    );
  }
  const smallest = results.reduce((a, b) => (b.ratio < a.ratio ? b : a));
  if (json) {
    console.log(
      JSON.stringify({
        suite: 'resume',
        sightflow: { ms: smallest.resume[0] },
        peer: { name: 'open and read to the frame', ms: smallest.peer[0] },
        ratio: smallest.ratio,
        files: results,
      }),
    );
  }
}

const round = (v: number) => Math.round(v * 10) / 10;
