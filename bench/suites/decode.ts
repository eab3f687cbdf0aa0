// `npm run bench -- decode [--quick] [--json] [--threads N]`: decode + 1 fps sampling + RGB24 conversion
// throughput of the native decoder beside the FFmpeg CLI doing the same work
// (`ffmpeg -threads N -i X -vf fps=1 -pix_fmt rgb24 -f null -`), same thread count, on a generated 1080p
// H.264 clip and tracking/vtest_PETS09-S2L1_full/vtest.avi from the evaluation data. Throughput is source
// frames per second of wall time (the CLI's includes its process start, as a caller would pay it).
// Ratio = ours / ffmpeg; the JSON line reports the slowest file's ratio.
import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { VideoDecoder } from '../../src/video/source/decoder.js';
import { evalDir, skipWithoutEvalData } from '../../eval/dir.js';
import { makeMedia } from '../../test/helpers/media.js';

const exec = promisify(execFile);

interface Result {
  file: string;
  frames: number;
  ours: number;
  peer: number;
  ratio: number;
}

async function countFrames(path: string): Promise<number> {
  const { stdout } = await exec('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-count_packets',
    '-show_entries',
    'stream=nb_read_packets',
    '-of',
    'csv=p=0',
    path,
  ]);
  return Number(stdout.trim());
}

/** Seconds for one pass of ours: open, every 1 fps sample as RGB24 into reused buffers, close. */
async function ours(path: string, threads: number): Promise<{ seconds: number; sampled: number; decoded: number }> {
  const t0 = process.hrtime.bigint();
  const d = await VideoDecoder.open(path, { threads, maxFrames: 1e9 });
  let sampled = 0;
  for await (const f of d.frames(4, true)) sampled += f.data.length > 0 ? 1 : 0;
  const { decodedFrames } = d.stats;
  await d.close();
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, sampled, decoded: decodedFrames };
}

async function ffmpegCli(path: string, threads: number): Promise<number> {
  const t0 = process.hrtime.bigint();
  await exec('ffmpeg', [
    '-nostdin',
    '-v',
    'error',
    '-threads',
    String(threads),
    '-i',
    path,
    '-vf',
    'fps=1',
    '-pix_fmt',
    'rgb24',
    '-f',
    'null',
    '-',
  ]);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

export async function run({ quick, json, args }: { quick: boolean; json: boolean; args: string[] }): Promise<void> {
  // The slowest ratio over both files is the headline number: without vtest.avi there is none to report.
  if (skipWithoutEvalData({ json }, 'tracking/vtest_PETS09-S2L1_full/vtest.avi')) return;
  const ti = args.indexOf('--threads');
  const threads = ti >= 0 ? Number(args[ti + 1]) : Math.min(availableParallelism(), 8);
  const repeats = quick ? 1 : 5;
  const seconds = quick ? 4 : 20;
  const files = [
    await makeMedia(`bench_1080p_${seconds}s.mp4`, [
      '-f',
      'lavfi',
      '-i',
      `testsrc2=size=1920x1080:rate=25:duration=${seconds}`,
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-g',
      '50',
      '-pix_fmt',
      'yuv420p',
    ]),
    join(evalDir('tracking/vtest_PETS09-S2L1_full'), 'vtest.avi'),
  ];
  const results: Result[] = [];
  for (const file of files) {
    const frames = await countFrames(file);
    await ours(file, threads); // warm the page cache and the addon
    let best = Infinity,
      bestPeer = Infinity,
      sampled = 0,
      decoded = 0;
    for (let i = 0; i < repeats; i++) {
      // Interleaved so both see the same machine load.
      const o = await ours(file, threads);
      best = Math.min(best, o.seconds);
      sampled = o.sampled;
      decoded = o.decoded;
      bestPeer = Math.min(bestPeer, await ffmpegCli(file, threads));
    }
    const r: Result = {
      file: file.split('/').pop() ?? file,
      frames,
      ours: frames / best,
      peer: frames / bestPeer,
      ratio: bestPeer / best,
    };
    results.push(r);
    console.log(
      `${r.file}: ${frames} frames (${decoded} decoded, ${sampled} sampled at 1 fps), ${threads} threads: ` +
        `sightflow ${r.ours.toFixed(1)} frames/s, ffmpeg ${r.peer.toFixed(1)} frames/s, ratio ${r.ratio.toFixed(2)}x`,
    );
  }
  const slowest = results.reduce((a, b) => (b.ratio < a.ratio ? b : a));
  console.log(`slowest ratio: ${slowest.ratio.toFixed(2)}x on ${slowest.file} (goal >= 0.9x)`);
  if (json) {
    console.log(
      JSON.stringify({
        suite: 'decode',
        sightflow: { fps: round(slowest.ours) },
        peer: { name: 'ffmpeg', fps: round(slowest.peer) },
        ratio: round(slowest.ratio),
        threads,
        files: results.map((r) => ({ ...r, ours: round(r.ours), peer: round(r.peer), ratio: round(r.ratio) })),
      }),
    );
  }
}

const round = (v: number) => Math.round(v * 100) / 100;
