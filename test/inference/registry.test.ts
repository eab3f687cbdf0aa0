// Model preparation offline into a temp data dir: every built-in model is produced from installed npm
// packages, checksums are verified, a second prepare reuses the files, corruption is caught by verify,
// and `sightflow models list|prepare|verify` reports all of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modelsCli } from '../../src/models/models-cli.js';
import { builtinManifestDir, ModelRegistry, readManifests, sha256File } from '../../src/inference/registry.js';
import { tempDataDir } from '../helpers/inference.js';

const BUILTIN = ['centernet-coco', 'ppocr-cls', 'ppocr-det', 'ppocr-rec'];

/** Runs the CLI capturing what it prints. */
async function cli(args: string[], dataDir: string): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [log, error, write] = [console.log, console.error, process.stderr.write.bind(process.stderr)];
  console.log = (...a: unknown[]) => {
    out.push(a.join(' '));
  };
  console.error = (...a: unknown[]) => {
    err.push(a.join(' '));
  };
  process.stderr.write = ((s: string | Uint8Array) => {
    err.push(String(s));
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await modelsCli(args, dataDir);
    return { code, out: out.join('\n'), err: err.join('') };
  } finally {
    console.log = log;
    console.error = error;
    process.stderr.write = write;
  }
}

test('built-in manifests parse and pin every checksum', async () => {
  const models = await readManifests(builtinManifestDir(), true);
  assert.deepEqual(models.map((m) => m.manifest.id).sort(), BUILTIN);
  for (const { manifest } of models) {
    assert.match(manifest.source.sha256 ?? '', /^[0-9a-f]{64}$/, `${manifest.id} source sha256`);
    if (manifest.format === 'tfjs-graph')
      assert.match(manifest.sha256 ?? '', /^[0-9a-f]{64}$/, `${manifest.id} prepared sha256`);
  }
  const centernet = models.find((m) => m.manifest.id === 'centernet-coco')!.manifest;
  assert.equal((centernet.labels as string[]).length, 80);
});

test('models prepare produces every built-in model offline; verify checks; a second prepare is cached', async (t) => {
  const dataDir = await tempDataDir(t);
  const listed = await cli(['list', '--json'], dataDir);
  assert.equal(listed.code, 0);
  assert.deepEqual(
    JSON.parse(listed.out).map((r: { id: string; prepared: boolean }) => [r.id, r.prepared]),
    BUILTIN.map((id) => [id, false]),
  );

  const missing = await cli(['verify'], dataDir);
  assert.equal(missing.code, 1);
  assert.match(missing.out, /FAIL centernet-coco: not prepared/);

  const prep = await cli(['prepare'], dataDir);
  assert.equal(prep.code, 0, prep.err);
  assert.match(prep.out, /centernet-coco: converted/);
  assert.match(prep.out, /ppocr-rec: copied/);
  assert.match(prep.err, /centernet-coco: convert/, 'progress is reported');

  const ok = await cli(['verify', '--json'], dataDir);
  assert.equal(ok.code, 0, ok.out);
  assert.deepEqual(
    JSON.parse(ok.out).map((r: { id: string; ok: boolean }) => [r.id, r.ok]),
    BUILTIN.map((id) => [id, true]),
  );

  const registry = await ModelRegistry.open(dataDir);
  const path = await registry.onnxPath('centernet-coco');
  assert.equal(await sha256File(path), registry.get('centernet-coco').manifest.sha256);
  assert.equal(
    (await registry.labels('ppocr-rec')).length,
    6623,
    'the recognition dictionary is copied beside the model',
  );

  const again = await cli(['prepare', 'centernet-coco', 'ppocr-det', '--json'], dataDir);
  assert.equal(again.code, 0);
  assert.deepEqual(
    JSON.parse(again.out).map((r: { action: string }) => r.action),
    ['cached', 'cached'],
  );

  // Corrupt a prepared file: verify fails, prepare repairs it.
  await writeFile(path, 'not a model');
  const bad = await cli(['verify', 'centernet-coco'], dataDir);
  assert.equal(bad.code, 1);
  assert.match(bad.out, /FAIL centernet-coco: .*sha256/);
  const repaired = await cli(['prepare', 'centernet-coco'], dataDir);
  assert.equal(repaired.code, 0);
  assert.match(repaired.out, /centernet-coco: converted/);
  assert.equal((await cli(['verify', 'centernet-coco'], dataDir)).code, 0);

  assert.equal((await cli(['frobnicate'], dataDir)).code, 2);
  assert.equal((await cli(['prepare', 'nope'], dataDir)).code, 2);
});

test('a source that does not match its checksum is refused; bring-your-own manifests are listed', async (t) => {
  const dataDir = await tempDataDir(t);
  const manifests = join(dataDir, 'manifests');
  await mkdir(manifests, { recursive: true });
  // A copy of the PP-OCR classifier as a local file, with a wrong pinned checksum.
  const reg0 = await ModelRegistry.open(dataDir);
  const src = reg0.sourceFiles(reg0.get('ppocr-cls'))[0].path;
  await cp(src, join(manifests, 'my-cls.onnx'));
  const manifest = JSON.parse(await readFile(join(builtinManifestDir(), 'ppocr-cls.json'), 'utf8'));
  await writeFile(
    join(manifests, 'my-cls.json'),
    JSON.stringify({ ...manifest, id: 'my-cls', source: { file: 'my-cls.onnx', sha256: '0'.repeat(64) } }),
  );
  const registry = await ModelRegistry.open(dataDir);
  assert.ok(registry.list().some((m) => m.manifest.id === 'my-cls' && !m.builtin));
  await assert.rejects(registry.prepare('my-cls'), /sha256 .* manifest expects 0000/);
  // Without a pinned checksum the file is taken as it is and recorded.
  await writeFile(
    join(manifests, 'my-cls.json'),
    JSON.stringify({ ...manifest, id: 'my-cls', source: { file: 'my-cls.onnx' } }),
  );
  const byo = await ModelRegistry.open(dataDir);
  const r = await byo.prepare('my-cls');
  assert.equal(r.sha256, manifest.source.sha256);
  assert.equal((await byo.verify('my-cls')).ok, true);
  assert.equal((await byo.prepare('my-cls')).action, 'cached');
  // The local file changes: verify says the prepared copy is not that file; prepare takes the new one.
  await writeFile(join(manifests, 'my-cls.onnx'), Buffer.concat([await readFile(src), Buffer.from([0])]));
  assert.equal((await byo.verify('my-cls')).status, 'missing');
  assert.equal((await byo.prepare('my-cls')).action, 'copied');
  assert.equal((await byo.verify('my-cls')).ok, true);
  await assert.rejects(byo.onnxPath('ppocr-det'), (e: unknown) => (e as { status: number }).status === 503);
  // A broken bring-your-own manifest is skipped and reported, naming its file and field; the rest still load.
  await writeFile(join(manifests, 'broken.json'), JSON.stringify({ id: 'Broken Name', task: 'detect' }));
  const withBroken = await ModelRegistry.open(dataDir);
  assert.equal(withBroken.problems.length, 1);
  assert.match(withBroken.problems[0].message, /broken\.json: id: /);
  assert.ok(withBroken.list().some((m) => m.manifest.id === 'my-cls'));
  const verify = await cli(['verify', 'my-cls'], dataDir);
  assert.equal(verify.code, 1, 'verify fails while a manifest is skipped');
  assert.match(verify.err, /skipped: model manifest .*broken\.json: id: /);
  // A bring-your-own manifest reusing a taken id is skipped too.
  await writeFile(
    join(manifests, 'broken.json'),
    JSON.stringify({ ...manifest, id: 'ppocr-cls', source: { file: 'my-cls.onnx' } }),
  );
  assert.match(
    (await ModelRegistry.open(dataDir)).problems[0].message,
    /broken\.json skipped: model id ppocr-cls is defined twice/,
  );
});

test('a re-read of the manifests that overlaps a removal or an addition here does not undo it', async (t) => {
  const dataDir = await tempDataDir(t);
  const manifests = join(dataDir, 'manifests');
  await mkdir(manifests, { recursive: true });
  const manifest = JSON.parse(await readFile(join(builtinManifestDir(), 'ppocr-cls.json'), 'utf8'));
  const write = (id: string) =>
    writeFile(join(manifests, `${id}.json`), JSON.stringify({ ...manifest, id, source: { file: 'x.onnx' } }));
  // Many manifests make a re-read long enough to remove one while it is in flight; the one removed is read first.
  for (let i = 0; i < 300; i++) await write(`z${String(i).padStart(3, '0')}`);
  const registry = await ModelRegistry.open(dataDir);
  for (let round = 0; round < 5; round++) {
    await write('a-gone');
    await registry.reload();
    assert.equal(registry.has('a-gone'), true);
    // Removed as the admin API does (manifest deleted, then forgotten) after the re-read listed and read it.
    const reading = registry.reload();
    await new Promise((r) => setTimeout(r, 2));
    rmSync(join(manifests, 'a-gone.json'));
    registry.delete('a-gone');
    await reading;
    assert.equal(registry.has('a-gone'), false, `round ${round}: the removed model came back`);
    // Added as the admin API does (registered and held, manifest written, then settled) while a re-read that
    // listed the folder before the manifest existed is in flight.
    const spec = {
      manifest: { ...manifest, id: 'a-new', source: { file: 'x.onnx' } },
      manifestPath: join(manifests, 'a-new.json'),
      builtin: false,
    };
    registry.put(spec);
    registry.hold('a-new');
    const listing = registry.reload();
    await new Promise((r) => setTimeout(r, 2));
    await write('a-new');
    registry.settle('a-new');
    await listing;
    assert.equal(registry.has('a-new'), true, `round ${round}: the added model vanished`);
    rmSync(join(manifests, 'a-new.json'));
    registry.delete('a-new');
  }
});
