// The served OpenAPI document passes Redocly's `recommended` ruleset with no errors: what /openapi.json says
// is loadable by generators and doc tools, not just well-formed JSON. Warnings are printed, not failed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, api, type TestApp } from '../helpers/app.js';
import { projectRoot } from '../../src/base/paths.js';

const run = promisify(execFile);
let t: TestApp;
let dir: string;
before(async () => {
  t = await startTestApp();
  dir = mkdtempSync(join(tmpdir(), 'sightflow-openapi-'));
});
after(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: Array<{ pointer: string }>;
}

test('/openapi.json passes redocly lint (recommended) with no errors', { timeout: 120_000 }, async () => {
  const r = await api(t, '/openapi.json', { key: null });
  assert.equal(r.status, 200);
  const file = join(dir, 'openapi.json');
  writeFileSync(file, r.text);
  const bin = join(projectRoot, 'node_modules', '.bin', 'redocly');
  // Exit status 1 means problems were found; the JSON report says which.
  const out = await run(bin, ['lint', '--format=json', '--extends=recommended', file], {
    cwd: dir,
    maxBuffer: 64 << 20,
  }).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? '' }));
  const start = out.stdout.indexOf('{');
  assert.ok(start >= 0, `no JSON report from redocly: ${out.stderr.slice(-2000)}`);
  const report = JSON.parse(out.stdout.slice(start)) as { problems: LintProblem[] };
  const fmt = (p: LintProblem) => `${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`;
  const warnings = report.problems.filter((p) => p.severity !== 'error');
  if (warnings.length) console.log(`redocly warnings:\n${warnings.map(fmt).join('\n')}`);
  const errors = report.problems.filter((p) => p.severity === 'error');
  assert.deepEqual(errors.map(fmt), []);
});
