// /console serving without a browser: which file a path resolves to (SPA fallback, traversal refused,
// content types, cache policy) and the 503 answers when the console was never built.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConsoleFile } from '../../src/console/static-files.js';
import { consoleRoutes } from '../../src/console/console.module.js';
import type { RequestContext } from '../../src/http/route.js';

function builtDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><div id="app"></div>');
  writeFileSync(join(dir, 'assets', 'index-abc.js'), 'console.log(1)');
  writeFileSync(join(dir, 'assets', 'index-abc.css'), 'body{}');
  writeFileSync(join(dir, 'logo.svg'), '<svg/>');
  return dir;
}

test('paths resolve to files with their types; pages fall back to index.html; traversal and missing assets do not', async () => {
  const dir = builtDir();
  try {
    const index = await resolveConsoleFile(dir, '');
    assert.equal(index.kind, 'file');
    assert.ok(
      index.kind === 'file' &&
        index.path === join(dir, 'index.html') &&
        index.headers['Content-Type'] === 'text/html; charset=utf-8' &&
        index.headers['Cache-Control'] === 'no-cache',
    );
    const js = await resolveConsoleFile(dir, 'assets/index-abc.js');
    assert.ok(
      js.kind === 'file' &&
        js.headers['Content-Type'] === 'text/javascript; charset=utf-8' &&
        /immutable/.test(js.headers['Cache-Control']!),
    );
    const css = await resolveConsoleFile(dir, 'assets/index-abc.css');
    assert.ok(css.kind === 'file' && css.headers['Content-Type'] === 'text/css; charset=utf-8');
    const svg = await resolveConsoleFile(dir, 'logo.svg');
    assert.ok(
      svg.kind === 'file' &&
        svg.headers['Content-Type'] === 'image/svg+xml' &&
        svg.headers['Cache-Control'] === 'no-cache',
    );
    const deep = await resolveConsoleFile(dir, 'projects/proj_1/tasks/vt_2');
    assert.ok(deep.kind === 'file' && deep.path === join(dir, 'index.html'));
    assert.equal((await resolveConsoleFile(dir, 'assets/gone.js')).kind, 'missing');
    assert.equal((await resolveConsoleFile(dir, '../package.json')).kind, 'missing');
    assert.equal((await resolveConsoleFile(dir, 'assets/../../../etc/passwd')).kind, 'missing');
    assert.equal((await resolveConsoleFile(dir, 'assets')).kind, 'file', 'a directory name is a page path: index.html');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('not built: 503 with an HTML page for browsers and the error JSON otherwise', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-console-empty-'));
  try {
    const [root] = consoleRoutes(join(dir, 'dist'));
    const ctx = (accept: string) =>
      ({ method: 'GET', path: '/console', headers: { accept }, params: {} }) as unknown as RequestContext;
    const html = await root!.handler(ctx('text/html,application/xhtml+xml'));
    assert.ok('body' in html && html.status === 503);
    assert.match(String(html.body), /Console not built/);
    assert.equal(html.headers?.['Content-Type'], 'text/html; charset=utf-8');
    const json = await root!.handler(ctx('application/json'));
    assert.ok('json' in json && json.status === 503);
    assert.deepEqual((json.json as { error: { code: string } }).error.code, 'console_not_built');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
