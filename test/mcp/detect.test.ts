// detect_objects over MCP (both transports) answers the same objects as POST /v1/vision/detect, for a photo
// given as a URL on a loopback server (the test app allows private URLs) and as base64; the usage is billed
// like REST (one ledger row per answered call).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { evalDataSkip, evalDir } from '../../eval/dir.js';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { connect, KINDS, textOf } from '../helpers/mcp-clients.js';

const PHOTO = '000000000036'; // people, an umbrella
const noData = evalDataSkip(`detection_coco128/images/${PHOTO}.jpg`);

let t: TestApp;
let files: Server;
let filesUrl = '';
// Empty without the evaluation data: the test that sends it is skipped then.
const photo = noData ? Buffer.alloc(0) : readFileSync(join(evalDir('detection_coco128/images'), `${PHOTO}.jpg`));

before(async () => {
  if (noData) return; // the only test is skipped: no server to start
  t = await startTestApp();
  files = createServer((req, res) => {
    if (req.url === `/${PHOTO}.jpg`) {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.end(photo);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  filesUrl = `http://127.0.0.1:${(files.address() as { port: number }).port}`;
});
after(async () => {
  if (noData) return;
  await t?.close();
  await new Promise((r) => files?.close(r));
});

type Obj = { class: string; confidence: number; bbox: number[]; attributes: Record<string, unknown> };

function sameObjects(got: Obj[], want: Obj[], what: string): void {
  assert.equal(got.length, want.length, `${what}: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`);
  want.forEach((w, i) => {
    const g = got[i]!;
    assert.equal(g.class, w.class, what);
    assert.ok(Math.abs(g.confidence - w.confidence) < 1e-3, `${what}: confidence ${g.confidence} vs ${w.confidence}`);
    g.bbox.forEach((v, j) => assert.ok(Math.abs(v - w.bbox[j]!) < 0.5, `${what}: bbox ${g.bbox} vs ${w.bbox}`));
    assert.deepEqual(g.attributes, w.attributes, what);
  });
}

test('detect_objects answers the objects of POST /v1/vision/detect (URL and base64, both transports)', {
  skip: noData,
}, async (tt) => {
  if (t.app.server.router.match('POST', '/v1/vision/detect').kind !== 'found') {
    tt.skip('POST /v1/vision/detect is not registered yet; re-run once the vision routes land');
    return;
  }
  const inputs = {
    url: { image: `${filesUrl}/${PHOTO}.jpg` },
    base64: { image_base64: `data:image/jpeg;base64,${photo.toString('base64')}` },
  };
  const rest = await api(t, '/v1/vision/detect', { method: 'POST', json: inputs.base64 });
  assert.equal(rest.status, 200, rest.text);
  const want: Obj[] = rest.body.objects;
  assert.ok(
    want.some((o) => o.class === 'person'),
    `the photo shows people: ${rest.text}`,
  );

  const detectRows = async () =>
    (await t.app.services.usage.events(t.projectId)).filter((e) => e.endpoint === '/v1/vision/detect').length;
  const rowsBefore = await detectRows();
  for (const kind of KINDS) {
    const c = await connect(t, kind);
    try {
      for (const [how, args] of Object.entries(inputs)) {
        const r = await c.client.callTool({ name: 'detect_objects', arguments: args });
        assert.ok(!r.isError, `${kind} ${how}: ${textOf(r)}`);
        const sc = r.structuredContent as {
          objects: Obj[];
          model: string;
          usage: { input_tokens: number; output_tokens: number };
        };
        sameObjects(sc.objects, want, `${kind} ${how}`);
        assert.equal(sc.model, rest.body.model);
        assert.deepEqual(sc.usage, rest.body.usage);
        assert.match(textOf(r), /^Detected \d+ objects?: .*person/);
      }
      // The filter and threshold arguments reach the route.
      const people = await c.client.callTool({
        name: 'detect_objects',
        arguments: { ...inputs.base64, classes: ['person'], confidence_threshold: 0.6 },
      });
      const objs = (people.structuredContent as { objects: Obj[] }).objects;
      assert.ok(objs.every((o) => o.class === 'person' && o.confidence >= 0.6));
      sameObjects(
        objs,
        want.filter((o) => o.class === 'person' && o.confidence >= 0.6),
        `${kind} filtered`,
      );

      // An image URL that cannot be fetched is a tool error with the REST message.
      const missing = await c.client.callTool({
        name: 'detect_objects',
        arguments: { image: `${filesUrl}/missing.jpg` },
      });
      const restMissing = await api(t, '/v1/vision/detect', {
        method: 'POST',
        json: { image: `${filesUrl}/missing.jpg` },
      });
      assert.equal(missing.isError, true);
      assert.equal(textOf(missing), restMissing.body.error.message);
    } finally {
      await c.close();
    }
  }
  // Billed like REST: one ledger row per answered call (2 inputs + 1 filtered, per transport).
  assert.equal((await detectRows()) - rowsBefore, KINDS.length * 3);
});
