// The Python SDK's tests (clients/python/tests: pytest, the conformance cases against a real server) run on
// Debian's python3 with Debian's python3-httpx and python3-pytest (scripts/system-packages.txt). pytest
// exits 0 only when tests ran and passed (5 means none were collected), and the count of passed tests is
// checked too, so a suite that silently collects nothing fails here. And `pip install ./clients/python` works
// offline with Debian's setuptools (--no-build-isolation: no PyPI here).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/base/paths.js';

const run = promisify(execFile);
/** Debian's interpreter, where the apt packages are; a python3 earlier on PATH may be another one. */
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

test('the Python SDK passes its conformance tests (pytest)', { timeout: 300_000 }, async () => {
  const probe = await run(PYTHON, ['-c', 'import httpx, pytest; print(httpx.__version__, pytest.__version__)']).catch(
    (e: { stderr?: string }) => ({ stdout: '', stderr: e.stderr ?? String(e) }),
  );
  assert.ok(
    probe.stdout.trim(),
    `${PYTHON} lacks httpx or pytest (Debian's python3-httpx and python3-pytest, installed by scripts/setup.sh test): ${probe.stderr.slice(-500)}`,
  );
  const out = await run(PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
    cwd: join(projectRoot, 'clients', 'python'),
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    maxBuffer: 16 << 20,
    timeout: 280_000,
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({
      code: e.code ?? -1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    }),
  );
  const report = `${out.stdout.slice(-6000)}\n${out.stderr.slice(-3000)}`;
  assert.equal(out.code, 0, `pytest exited ${out.code}${out.code === 5 ? ' (no tests collected)' : ''}:\n${report}`);
  const passed = Number(/(\d+) passed/.exec(out.stdout)?.[1] ?? 0);
  assert.ok(passed >= 11, `only ${passed} tests passed:\n${report}`);
  assert.doesNotMatch(out.stdout, /\d+ (failed|error)/, report);
});

test("pip installs the package (offline, Debian's setuptools) into a virtual environment, and it imports", {
  timeout: 120_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-pip-'));
  try {
    // A copy, so that the build's leftovers (build/, *.egg-info) stay out of the repository.
    cpSync(join(projectRoot, 'clients', 'python'), join(dir, 'src'), {
      recursive: true,
      filter: (p) => !p.includes('__pycache__') && !p.endsWith('/tests'),
    });
    await run(PYTHON, ['-m', 'venv', '--system-site-packages', join(dir, 'venv')]);
    await run(
      join(dir, 'venv', 'bin', 'pip'),
      ['install', '--no-build-isolation', '--no-index', '--quiet', join(dir, 'src')],
      { maxBuffer: 16 << 20 },
    );
    const probe = await run(
      join(dir, 'venv', 'bin', 'python'),
      [
        '-c',
        'import sightflow, json; print(json.dumps({"file": sightflow.__file__, "ops": len(sightflow.OPERATIONS), "clients": [sightflow.Client.__name__, sightflow.AsyncClient.__name__]}))',
      ],
      { cwd: dir },
    );
    const got = JSON.parse(probe.stdout) as { file: string; ops: number; clients: string[] };
    assert.ok(got.file.startsWith(join(dir, 'venv')), `imported from the environment: ${got.file}`);
    assert.ok(got.ops > 40);
    assert.deepEqual(got.clients, ['Client', 'AsyncClient']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
