// TasksService called directly (no HTTP): real database, the real detector's class list, a synthetic video
// provider behind the real worker. A task is enqueued, runs to success, its results are read back and it is
// billed once by frames; bad options are refused before a task exists; other projects see a 404.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTestServices, type TestServices } from '../helpers/app.js';
import { SyntheticProvider } from '../helpers/synthetic-provider.js';
import { FAST } from '../helpers/video-tasks.js';
import { videoModule, type VideoModule } from '../../src/video/video.module.js';
import { ApiError } from '../../src/base/errors.js';

let t: TestServices;
let video: VideoModule;
before(async () => {
  t = await openTestServices();
  await t.s.models.ready;
  video = videoModule(t.s, {
    worker: true,
    providers: () => [new SyntheticProvider({ frames: 5, frameMs: 1 })],
    settings: FAST,
  });
  await video.start!();
});
after(async () => {
  await video?.stop!();
  await t?.close();
});

const body = {
  input: [{ type: 'video_url' as const, url: 'http://127.0.0.1:9/clip.mp4' }],
  steps: [{ model: 'detect' as const }],
};

test('enqueue, run to success, read results; one ledger row by frames', async () => {
  const created = await video.tasks.create(t.caller(), body as never);
  assert.equal(created.status, 'pending');
  let rec: Record<string, unknown> = {};
  for (let i = 0; i < 200; i++) {
    rec = await video.tasks.get(t.caller(), created.id as string);
    if (rec.status === 'succeeded') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(rec.status, 'succeeded');
  const withRequest = await video.tasks.get(t.caller(), created.id as string, 'request');
  assert.deepEqual((withRequest.request as { steps: unknown }).steps, body.steps);
  const results = (await video.tasks.results(t.caller(), created.id as string)) as {
    usage: { processed_frames: number };
  };
  assert.equal(results.usage.processed_frames, 5);
  const list = await video.tasks.list(t.caller(), {});
  assert.deepEqual(
    (list.data as Array<{ id: string }>).map((x) => x.id),
    [created.id],
  );
  const rows = await t.s.usage.events(t.projectId);
  assert.deepEqual(
    rows.map((r) => [r.endpoint, Number(r.frames), r.key_id]),
    [['/v1/video/process', 5, t.keyId]],
  );
});

test('bad options are refused before a task exists; an unknown include is a 400; other projects see 404', async () => {
  const n = ((await video.tasks.list(t.caller(), {})).data as unknown[]).length;
  await assert.rejects(
    video.tasks.create(t.caller(), {
      ...body,
      steps: [{ model: 'detect', parameters: { classes: ['unicorn'] } }],
    } as never),
    (e) => e instanceof ApiError && e.status === 400,
  );
  assert.equal(((await video.tasks.list(t.caller(), {})).data as unknown[]).length, n);
  const created = await video.tasks.create(t.caller(), body as never);
  await assert.rejects(
    video.tasks.get(t.caller(), created.id as string, 'everything'),
    (e) => e instanceof ApiError && e.status === 400,
  );
  const other = await t.s.projects.create('other');
  await assert.rejects(
    video.tasks.get({ projectId: other.id }, created.id as string),
    (e) => e instanceof ApiError && e.status === 404,
  );
  await assert.rejects(
    video.tasks.cancel({ projectId: other.id }, created.id as string),
    (e) => e instanceof ApiError && e.status === 404,
  );
});
