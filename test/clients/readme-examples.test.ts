// The README's five-line examples of each SDK run as written against a real server (only the photo, the
// video URL and the package name are pointed at this repository's copies): what a reader pastes works.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startConformance, SAMPLE_IMAGE, type Conformance } from '../../clients/conformance/server.js';
import { projectRoot } from '../../src/base/paths.js';

const run = promisify(execFile);
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
let c: Conformance;
const dir = mkdtempSync(join(tmpdir(), 'sightflow-readme-'));
before(async () => {
  c = await startConformance();
});
after(async () => {
  await c?.close();
  rmSync(dir, { recursive: true, force: true });
});

function block(lang: string): string {
  const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Client SDKs'));
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section);
  assert.ok(m, `README's Client SDKs section has a ${lang} block`);
  assert.equal(m[1]!.trim().split('\n').length, 5, `the ${lang} example is five lines`);
  return m[1]!
    .replaceAll("'street.jpg'", JSON.stringify(SAMPLE_IMAGE))
    .replaceAll('"street.jpg"', JSON.stringify(SAMPLE_IMAGE))
    .replaceAll('https://example.com/street.mp4', 'http://127.0.0.1:9/clip.mp4?frames=3&frame_ms=1');
}

const env = () => ({
  ...process.env,
  SIGHTFLOW_API_KEY: c.key,
  SIGHTFLOW_BASE_URL: c.url,
  PYTHONDONTWRITEBYTECODE: '1',
});

test("the README's TypeScript example runs", { timeout: 120_000 }, async () => {
  const file = join(dir, 'example.mts');
  writeFileSync(
    file,
    block('ts').replace(
      "from 'sightflow-client'",
      `from ${JSON.stringify(join(projectRoot, 'clients', 'typescript', 'src', 'index.ts'))}`,
    ),
  );
  const out = await run(process.execPath, ['--import', 'tsx', file], { env: env(), cwd: projectRoot });
  assert.match(out.stdout, /class: 'person'/, 'the detected objects');
  assert.equal(out.stdout.match(/index: 0/g)?.length, 3, `a line for each of the three frames' chunks:\n${out.stdout}`);
});

test("the README's Python example runs", { timeout: 120_000 }, async () => {
  const file = join(dir, 'example.py');
  writeFileSync(file, block('python'));
  const out = await run(PYTHON, [file], { env: { ...env(), PYTHONPATH: join(projectRoot, 'clients', 'python') } });
  const lines = out.stdout.trim().split('\n');
  assert.match(lines[0]!, /'class': 'person'/, 'the detected objects');
  assert.equal(
    out.stdout.match(/'index': 0/g)?.length,
    3,
    `a line for each of the three frames' chunks:\n${out.stdout}`,
  );
});
