// The per-frame video pipeline through LocalProvider.run, the call a worker makes, with an emit that collects
// frames: sampling, range and max_frames on generated clips, `when` filters on a real photo, abort, corrupt
// input, URL policy, and stable person tracks on TUD-Campus.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ApiError, isApiError } from '../../src/base/errors.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { projectRoot } from '../../src/base/paths.js';
import { Detector } from '../../src/detection/detect.js';
import { evaluateMot, parseMotFile, type MotRow } from '../../eval/lib/mot-metrics.js';
import { LocalProvider } from '../../src/video/worker/local-provider.js';
import { OcrEngine } from '../../src/ocr/engine.js';
import { OCR_MODEL_IDS } from '../../src/ocr/ocr-models.js';
import { enableMetrics, renderMetrics } from '../../src/metrics/registry.js';
import { FramePipeline } from '../../src/video/steps/frame-pipeline.js';
import { parseExposition, sampleSum } from '../helpers/metrics-text.js';
import type { FrameOutput, ProviderResult, VideoTaskRequest } from '../../src/video/task-contract.js';
import { corruptClip, garbageFile, h264Clip, longClip, stillClip, textClip } from '../helpers/videos.js';
import { carPhoto, evalData, TUD_CAMPUS } from '../helpers/eval-data.js';
import { EVAL_DATA_MISSING } from '../../eval/dir.js';

// OCR over the models setup prepared in data/ (the server hands the engine its own registry and runtime).
const { ocrImage, ocrRegion } = OcrEngine.forDataDir(join(projectRoot, 'data'));

let detector: Promise<Detector> | null = null;
function loadDetector(): Promise<Detector> {
  detector ??= (async () => {
    const registry = await ModelRegistry.open(join(projectRoot, 'data'), {
      modelsDir: process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models'),
    });
    const runtime = new InferenceRuntime({ providers: ['cpu'], log: { info() {}, warn() {} } });
    return Detector.create(runtime, registry, 'centernet-coco');
  })();
  return detector;
}

const provider = (allowPrivateUrls = true) =>
  new LocalProvider({ allowPrivateUrls, models: { detector: loadDetector, ocrImage, ocrRegion } });

async function runTask(
  request: VideoTaskRequest,
  source: { path?: string; url?: string },
  opts: { signal?: AbortSignal; onFrame?: (f: FrameOutput) => boolean | void; allowPrivateUrls?: boolean } = {},
) {
  const frames: FrameOutput[] = [];
  const result: ProviderResult = await provider(opts.allowPrivateUrls ?? true).run(request, source, {
    taskId: 'vt_test',
    projectId: 'p',
    signal: opts.signal ?? new AbortController().signal,
    emit: async (f) => {
      frames.push(f);
      return opts.onFrame?.(f) !== false;
    },
  });
  return { frames, result };
}

/** A cheap pipeline (no models): a feature step with no producing step before it selects nothing. */
const cheap = (input: Partial<VideoTaskRequest['input'][number]> = {}): VideoTaskRequest => ({
  input: [{ type: 'video_url', ...input }],
  steps: [{ model: 'feature' }],
});

const indices = (frames: FrameOutput[]) => frames.map((f) => f.stream_info.frame_index);

let clip: string;
before(async () => {
  clip = await h264Clip();
});

test('default sampling is 1 fps: indices 0, 25, ..., 225 and finish stop', async () => {
  const { frames, result } = await runTask(cheap(), { path: clip });
  assert.deepEqual(indices(frames), [0, 25, 50, 75, 100, 125, 150, 175, 200, 225]);
  assert.equal(result.finish_reason, 'stop');
  assert.equal(result.usage.processed_frames, 10);
  for (const f of frames) {
    assert.equal(f.stream_info.fps, 25);
    assert.equal(f.stream_info.total_frames, 250);
    assert.deepEqual(f.delta.results, [{ index: 0, targets: [] }]);
  }
  // Counters are cumulative and per frame: decoded_frames reaches the sampled frame itself.
  for (let i = 1; i < frames.length; i++) {
    assert.ok(frames[i].stream_info.decoded_frames >= frames[i - 1].stream_info.decoded_frames);
    assert.ok(frames[i].stream_info.elapsed_ms >= frames[i - 1].stream_info.elapsed_ms);
  }
  assert.ok(frames[3].stream_info.decoded_frames >= 76, JSON.stringify(frames[3].stream_info));
  assert.equal(result.usage.decoded_frames, 250);
  assert.equal(result.usage.dropped_frames, 240);
});

test('interval, fps, range in seconds and in frames give exactly the expected indices', async () => {
  assert.deepEqual(
    indices((await runTask(cheap({ sampling: { mode: 'interval', value: 2 } }), { path: clip })).frames),
    [0, 50, 100, 150, 200],
  );
  assert.deepEqual(
    indices(
      (await runTask(cheap({ sampling: { mode: 'fps', value: 5 }, range: { start: 2, end: 3 } }), { path: clip }))
        .frames,
    ),
    [50, 55, 60, 65, 70],
  );
  assert.deepEqual(
    indices(
      (
        await runTask(cheap({ sampling: { mode: 'fps', value: 25 }, range: { start: 10, end: 20, unit: 'frames' } }), {
          path: clip,
        })
      ).frames,
    ),
    [10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
  );
  const key = (await runTask(cheap({ sampling: { mode: 'keyframe' } }), { path: clip })).frames;
  assert.deepEqual(indices(key), [0, 50, 100, 150, 200]);
});

test('max_frames caps the frames and finishes with max_frames only when more were due', async () => {
  const capped = await runTask(cheap({ max_frames: 3 }), { path: clip });
  assert.deepEqual(indices(capped.frames), [0, 25, 50]);
  assert.equal(capped.result.finish_reason, 'max_frames');
  const exact = await runTask(cheap({ max_frames: 10 }), { path: clip });
  assert.equal(exact.frames.length, 10);
  assert.equal(exact.result.finish_reason, 'stop');
});

test('detect -> ocr(when class_is car) -> feature(when class_is train): steps touch only what they select', {
  timeout: 300_000,
}, async (t) => {
  const photo = carPhoto();
  if (!photo) return t.skip(EVAL_DATA_MISSING);
  const still = await stillClip(photo, 2);
  const detect = { model: 'detect', parameters: { confidence_threshold: 0.3 } };
  const input = [{ type: 'video_url' as const, sampling: { mode: 'fps' as const, value: 1 } }];
  const plain = await runTask({ input, steps: [detect] }, { path: still });
  const piped = await runTask(
    {
      input,
      steps: [
        detect,
        { model: 'ocr', when: { class_is: ['car'] } },
        { model: 'feature', when: { class_is: ['train'] } },
      ],
    },
    { path: still },
  );
  assert.equal(piped.frames.length, 2);
  for (let i = 0; i < piped.frames.length; i++) {
    const targets = piped.frames[i].delta.results[0].targets;
    const cars = targets.filter((x) => x.class === 'car');
    const others = targets.filter((x) => x.class !== 'car');
    assert.ok(cars.length >= 1, `a car is detected: ${JSON.stringify(targets)}`);
    assert.ok(
      others.some((x) => x.class === 'train'),
      `a train is detected: ${JSON.stringify(targets)}`,
    );
    for (const c of cars) {
      assert.equal(typeof c.text, 'string', 'ocr ran on every car');
      assert.equal(c.feature_digest, undefined);
    }
    for (const o of others) {
      assert.equal(o.text, undefined, `ocr did not run on ${o.class}`);
      if (o.class === 'train') assert.match(o.feature_digest ?? '', /^dim=160;norm=1\.0000$/);
      else assert.equal(o.feature_digest, undefined);
    }
    // Everything but the added fields is what detect alone produced: same ids, classes, scores, rois.
    const strip = targets.map(({ text: _t, feature_digest: _f, ...rest }) => rest);
    assert.deepEqual(strip, plain.frames[i].delta.results[0].targets);
    for (const x of targets) {
      assert.ok(Number.isInteger(x.track_id) && x.track_id > 0);
      assert.ok(x.roi.left >= 0 && x.roi.top >= 0 && x.roi.width > 0 && x.roi.height > 0);
    }
  }
  // A still image: an object found in both frames (same box) keeps its id. (Scores near the threshold
  // differ a little between the two encoded frames, so the sets of weak small cars may differ.)
  const iou = (a: FrameOutput['delta']['results'][number]['targets'][number]['roi'], b: typeof a) => {
    const iw = Math.min(a.left + a.width, b.left + b.width) - Math.max(a.left, b.left);
    const ih = Math.min(a.top + a.height, b.top + b.height) - Math.max(a.top, b.top);
    return iw <= 0 || ih <= 0 ? 0 : (iw * ih) / (a.width * a.height + b.width * b.height - iw * ih);
  };
  let same = 0;
  for (const x of piped.frames[1].delta.results[0].targets) {
    const twin = piped.frames[0].delta.results[0].targets.find((y) => y.class === x.class && iou(x.roi, y.roi) > 0.8);
    if (twin) {
      assert.equal(x.track_id, twin.track_id, `${x.class} keeps its id`);
      same++;
    }
  }
  assert.ok(same >= 2, `${same} objects in both frames`);
  const train = piped.result.tracks.find((x) => x.class === 'train');
  assert.ok(
    train && train.frames_seen === 2 && train.first_frame === 0 && train.last_frame === 5,
    JSON.stringify(piped.result.tracks),
  );
  assert.match(train.feature_digest ?? '', /^dim=160;norm=\d\.\d{4}$/);
  assert.ok(piped.result.tracks.filter((x) => x.class !== 'train').every((x) => x.feature_digest === undefined));
});

test('ocr with no detect before it reads whole frames and emits tracked `text` targets', {
  timeout: 120_000,
}, async () => {
  const { frames, result } = await runTask(
    {
      input: [{ type: 'video_url', sampling: { mode: 'fps', value: 1 } }],
      steps: [{ model: 'ocr' }, { model: 'feature', when: { class_is: ['text'] } }],
    },
    { path: await textClip() },
  );
  assert.equal(frames.length, 2);
  for (const f of frames) {
    const targets = f.delta.results[0].targets;
    assert.ok(targets.length >= 1, JSON.stringify(targets));
    for (const x of targets) {
      assert.equal(x.class, 'text');
      assert.ok(Number.isInteger(x.track_id) && x.track_id > 0);
      assert.match(x.feature_digest ?? '', /^dim=160;norm=1\.0000$/);
    }
    assert.match(targets.map((x) => x.text).join(' '), /HELLO/);
  }
  // The same line in both frames keeps its track.
  assert.deepEqual(
    frames[1].delta.results[0].targets.map((x) => x.track_id),
    frames[0].delta.results[0].targets.map((x) => x.track_id),
  );
  assert.ok(
    result.tracks.every(
      (x) => x.class === 'text' && x.frames_seen === 2 && /^dim=160;norm=/.test(x.feature_digest ?? ''),
    ),
  );
});

test("a task's frames take every model queue's background lane; a pipeline outside a task the interactive one", {
  timeout: 120_000,
}, async () => {
  enableMetrics({ projectLabel: false });
  // Queue waits by model and lane: one per run each model's queue started.
  const waits = async () => {
    const m = parseExposition((await renderMetrics(undefined)).body);
    const at = (model: string, lane: string) =>
      sampleSum(m, 'sightflow_model_queue_wait_seconds_count', { model, lane });
    return {
      detector: { background: at('centernet-coco', 'background'), interactive: at('centernet-coco', 'interactive') },
      ocr: {
        background: at(OCR_MODEL_IDS.detection, 'background'),
        interactive: at(OCR_MODEL_IDS.detection, 'interactive'),
      },
    };
  };
  const before = await waits();
  const detected = await runTask({ ...cheap(), steps: [{ model: 'detect' }] }, { path: clip });
  const read = await runTask(
    { input: [{ type: 'video_url', sampling: { mode: 'fps', value: 1 } }], steps: [{ model: 'ocr' }] },
    { path: await textClip() },
  );
  const after = await waits();
  assert.equal(after.detector.background - before.detector.background, detected.frames.length);
  assert.equal(after.ocr.background - before.ocr.background, read.frames.length);
  assert.deepEqual(
    [after.detector.interactive, after.ocr.interactive],
    [before.detector.interactive, before.ocr.interactive],
  );

  // The same steps in a pipeline without a task (a script's): interactive.
  const models = { detector: loadDetector, ocrImage, ocrRegion };
  const pipeline = await FramePipeline.create({ ...cheap(), steps: [{ model: 'detect' }, { model: 'ocr' }] }, models);
  await pipeline.process({ index: 0, width: 64, height: 48, data: new Uint8Array(64 * 48 * 3).fill(128) });
  const outside = await waits();
  assert.equal(outside.detector.interactive - after.detector.interactive, 1);
  assert.equal(outside.detector.background, after.detector.background);
});

test('unknown class and unknown feature model are ApiErrors (400), never retried', async () => {
  await assert.rejects(
    runTask(
      { input: [{ type: 'video_url' }], steps: [{ model: 'detect', parameters: { classes: ['unicorn'] } }] },
      { path: clip },
    ),
    (e: unknown) => isApiError(e) && e.status === 400 && e.code === 'unknown_class',
  );
  await assert.rejects(
    runTask(
      { input: [{ type: 'video_url' }], steps: [{ model: 'feature', parameters: { model: 'nope-v9' } }] },
      { path: clip },
    ),
    (e: unknown) => isApiError(e) && e.status === 400 && e.param === 'steps[0].parameters.model',
  );
});

test('a corrupt or non-video input is an ApiError and the process carries on', async () => {
  for (const path of [garbageFile(), await corruptClip()]) {
    await assert.rejects(runTask(cheap(), { path }), (e: unknown) => {
      assert.ok(e instanceof ApiError, `ApiError, got ${String(e)}`);
      assert.equal(e.status, 400);
      return true;
    });
  }
  // Still works afterwards.
  assert.equal((await runTask(cheap({ max_frames: 2 }), { path: clip })).frames.length, 2);
});

test('abort stops the run promptly, with no frame emitted after it', { timeout: 60_000 }, async () => {
  const long = await longClip();
  const ac = new AbortController();
  let abortedAt = 0;
  let afterAbort = 0;
  const p = runTask(
    cheap({ sampling: { mode: 'fps', value: 25 } }),
    { path: long },
    {
      signal: ac.signal,
      onFrame: (f) => {
        if (abortedAt) afterAbort++;
        if (f.stream_info.frame_index === 20) {
          abortedAt = performance.now();
          ac.abort();
        }
      },
    },
  );
  await assert.rejects(p, (e: unknown) => (e as Error).name === 'AbortError');
  const ms = performance.now() - abortedAt;
  assert.ok(ms < 2000, `stopped ${ms.toFixed(0)} ms after abort`);
  assert.equal(afterAbort, 0);
  // emit answering false (the task was cancelled) stops it too.
  let seen = 0;
  await assert.rejects(
    runTask(cheap({ sampling: { mode: 'fps', value: 25 } }), { path: long }, { onFrame: () => ++seen < 5 }),
    (e: unknown) => (e as Error).name === 'AbortError',
  );
  assert.equal(seen, 5);
});

test('video URLs: private addresses refused unless allowed, non-http schemes refused, http works', async () => {
  const size = statSync(clip).size;
  // Byte ranges, as any file server: FFmpeg seeks to an MP4's index at the end.
  const server = createServer((req, res) => {
    const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    if (!m) {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': size, 'accept-ranges': 'bytes' });
      return void createReadStream(clip).pipe(res);
    }
    const start = Number(m[1]);
    const end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
    res.writeHead(206, {
      'content-type': 'video/mp4',
      'content-length': end - start + 1,
      'content-range': `bytes ${start}-${end}/${size}`,
      'accept-ranges': 'bytes',
    });
    createReadStream(clip, { start, end }).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/clip.mp4`;
  try {
    await assert.rejects(
      runTask(cheap(), { url }, { allowPrivateUrls: false }),
      (e: unknown) => isApiError(e) && e.code === 'url_not_allowed',
    );
    await assert.rejects(
      runTask(cheap(), { url: 'ftp://example.com/x.mp4' }, { allowPrivateUrls: false }),
      (e: unknown) => isApiError(e) && e.status === 400,
    );
    await assert.rejects(
      runTask(cheap(), { url: `file://${clip}` }, { allowPrivateUrls: true }),
      (e: unknown) => isApiError(e) && e.status === 400,
    );
    const { frames, result } = await runTask(cheap({ max_frames: 4 }), { url }, { allowPrivateUrls: true });
    assert.deepEqual(indices(frames), [0, 25, 50, 75]);
    assert.equal(result.finish_reason, 'max_frames');
  } finally {
    server.close();
  }
});

test('TUD-Campus: person tracks keep their ids (every frame, first 40)', { timeout: 300_000 }, async (t) => {
  const video = TUD_CAMPUS();
  const gtPath = evalData('tracking', 'TUD-Campus', 'gt', 'gt.txt');
  if (!existsSync(video) || !existsSync(gtPath)) return t.skip(EVAL_DATA_MISSING);
  const { frames, result } = await runTask(
    {
      input: [{ type: 'video_url', sampling: { mode: 'fps', value: 25 }, max_frames: 40 }],
      steps: [{ model: 'detect', parameters: { classes: ['person'], confidence_threshold: 0.4 } }],
    },
    { path: video },
  );
  assert.equal(frames.length, 40);
  assert.deepEqual(
    indices(frames),
    Array.from({ length: 40 }, (_, i) => i),
  );
  const hyp: MotRow[] = [];
  for (const f of frames) {
    const ids = f.delta.results[0].targets.map((x) => x.track_id);
    assert.equal(new Set(ids).size, ids.length, 'ids are unique within a frame');
    for (const x of f.delta.results[0].targets) {
      assert.equal(x.class, 'person');
      assert.ok(x.confidence >= 0.4);
      hyp.push({
        frame: f.stream_info.frame_index + 1,
        id: x.track_id,
        x: x.roi.left,
        y: x.roi.top,
        w: x.roi.width,
        h: x.roi.height,
        conf: 1,
        cls: null,
        visibility: null,
      });
    }
  }
  const gt = parseMotFile((await import('node:fs')).readFileSync(gtPath, 'utf8')).filter((r) => r.frame <= 40);
  const m = evaluateMot(gt, hyp);
  // Measured 0 to 3 switches and MOTA ~0.5 here; generous bounds (the reference SORT scored MOTA 0.33-0.37).
  assert.ok(m.idSwitches <= 5, `ID switches ${m.idSwitches}`);
  assert.ok(m.mota > 0.3, `MOTA ${m.mota}`);
  assert.ok(m.idf1 > 0.45, `IDF1 ${m.idf1}`);
  // The summary agrees with the frames.
  for (const s of result.tracks) {
    const seen = hyp.filter((h) => h.id === s.track_id);
    assert.equal(s.frames_seen, seen.length);
    assert.equal(s.first_frame, Math.min(...seen.map((h) => h.frame)) - 1);
    assert.equal(s.last_frame, Math.max(...seen.map((h) => h.frame)) - 1);
    assert.equal(s.class, 'person');
  }
});

test('checkVideoUrl: every resolved address is checked; public literals pass', async () => {
  const { checkVideoUrl } = await import('../../src/video/source/video-source.js');
  for (const url of [
    'http://localhost:8080/a.mp4',
    'http://[::1]/a.mp4',
    'http://169.254.169.254/latest',
    'https://10.1.2.3/v.mp4',
    'http://[::ffff:127.0.0.1]/x',
  ]) {
    await assert.rejects(checkVideoUrl(url, false), (e: unknown) => isApiError(e) && e.code === 'url_not_allowed', url);
  }
  await checkVideoUrl('https://93.184.216.34/v.mp4', false);
  await checkVideoUrl('http://127.0.0.1/v.mp4', true);
  await assert.rejects(checkVideoUrl('not a url', false), (e: unknown) => isApiError(e) && e.status === 400);
});
