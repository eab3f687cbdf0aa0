// `npm run bench -- preprocess [--quick] [--json]`: letterbox + normalise of a 1920x1080 RGB frame into a
// 640x640 NCHW float32 tensor. Peer: sharp (resize with fit 'contain' = letterbox, raw RGB out) followed by
// the TypeScript loop that turns bytes into normalised planes, the usual way to feed ONNX Runtime from Node.
import sharp from 'sharp';
import { letterbox, letterboxAsync } from '../../src/native/image.js';

const W = 1920,
  H = 1080,
  D = 640;

/** Deterministic frame with gradients and texture, so no codec or kernel gets a trivial input. */
function frame(): Uint8Array {
  const px = new Uint8Array(W * H * 3);
  let s = 1;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      s = (s * 1103515245 + 12345) & 0x7fffffff;
      const i = (y * W + x) * 3;
      px[i] = (x * 255) / W;
      px[i + 1] = (y * 255) / H;
      px[i + 2] = ((x ^ y) & 0xff) ^ (s & 0x1f);
    }
  }
  return px;
}

async function peer(px: Uint8Array, out: Float32Array): Promise<void> {
  const { data, info } = await sharp(px, { raw: { width: W, height: H, channels: 3 } })
    .resize(D, D, { fit: 'contain', background: { r: 114, g: 114, b: 114 }, kernel: 'linear' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const plane = info.width * info.height;
  for (let p = 0, i = 0; p < plane; p++, i += 3) {
    out[p] = data[i] / 255;
    out[plane + p] = data[i + 1] / 255;
    out[2 * plane + p] = data[i + 2] / 255;
  }
}

/** Runs the contenders interleaved (so background load hits all of them alike) and returns median ms each. */
async function medians(runs: number, fns: Array<() => unknown>): Promise<number[]> {
  const times: number[][] = fns.map(() => []);
  for (const fn of fns) await fn(); // warm-up
  for (let i = 0; i < runs; i++) {
    for (let k = 0; k < fns.length; k++) {
      const t0 = performance.now();
      await fns[k]();
      times[k].push(performance.now() - t0);
    }
  }
  return times.map((t) => t.sort((a, b) => a - b)[Math.floor(t.length / 2)]);
}

export async function run({ quick, json }: { quick: boolean; json: boolean; args: string[] }): Promise<void> {
  const runs = quick ? 9 : 40;
  const px = frame();
  const img = { data: px, width: W, height: H, channels: 3 as const };
  const ours = new Float32Array(3 * D * D);
  const theirs = new Float32Array(3 * D * D);
  const [syncMs, asyncMs, peerMs] = await medians(runs, [
    () => letterbox(img, { width: D, height: D, out: ours }),
    () => letterboxAsync(img, { width: D, height: D, out: ours }),
    () => peer(px, theirs),
  ]);

  // Same output within interpolation differences: mean absolute difference over the tensor.
  let diff = 0;
  for (let i = 0; i < ours.length; i++) diff += Math.abs(ours[i] - theirs[i]);
  const meanDiff = diff / ours.length;

  const ratio = peerMs / syncMs;
  console.log(`letterbox 1920x1080 -> 640x640 NCHW float32 (median of ${runs})`);
  console.log(`  sightflow sync   ${syncMs.toFixed(2)} ms`);
  console.log(`  sightflow async  ${asyncMs.toFixed(2)} ms (libuv pool, event loop free)`);
  console.log(`  sharp+ts         ${peerMs.toFixed(2)} ms (sharp threads: ${sharp.concurrency()})`);
  console.log(`  ratio ${ratio.toFixed(2)}x  mean |difference| ${meanDiff.toFixed(4)} (0..1 scale)`);
  if (json) {
    console.log(
      JSON.stringify({
        suite: 'preprocess',
        sightflow: { ms: round(syncMs), async_ms: round(asyncMs) },
        peer: { name: 'sharp+ts', ms: round(peerMs) },
        ratio: round(ratio),
        mean_abs_diff: round(meanDiff),
      }),
    );
  }
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}
