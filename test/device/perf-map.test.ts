// bench/perf-map.ts: a JavaScript frame in a perf profile is named by the newest code V8 put at its address,
// since V8 compiles new functions into the addresses of code it freed (bench/owner-cpu-profile.ts reads it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePerfMap, readPerfMap } from '../../bench/perf-map.js';

test('perf map: the newest entry covering an address names it; outside every entry, none', () => {
  const map = parsePerfMap(
    [
      '1000 100 JS:*startupGlue pglite.js:1:1', // freed later; its addresses reused below
      '2000 40 JS:*other a.js:1:1',
      'not a map line',
      '1040 20 JS:*decodeJpeg image.ts:1:1', // inside the first, newer
      '1000 10 JS:*tiny b.js:1:1', // newer still, over the first's start
      '',
    ].join('\n'),
  );
  assert.equal(map.size, 4);
  assert.equal(map.name(0x1040), 'JS:*decodeJpeg image.ts:1:1');
  assert.equal(map.name(0x105f), 'JS:*decodeJpeg image.ts:1:1');
  assert.equal(
    map.name(0x1060),
    'JS:*startupGlue pglite.js:1:1',
    'past the newer entry, the older one still covers it',
  );
  assert.equal(map.name(0x1005), 'JS:*tiny b.js:1:1');
  assert.equal(map.name(0x1010), 'JS:*startupGlue pglite.js:1:1');
  assert.equal(map.name(0x10ff), 'JS:*startupGlue pglite.js:1:1');
  assert.equal(map.name(0x1100), undefined, 'an entry covers [start, start + size)');
  assert.equal(map.name(0x2020), 'JS:*other a.js:1:1');
  assert.equal(map.name(0xfff), undefined);
  assert.equal(map.name(0x3000), undefined);
  // Asked again (the cache) the same.
  assert.equal(map.name(0x1040), 'JS:*decodeJpeg image.ts:1:1');
});

test('perf map: a long entry before shorter ones still covers addresses past them', () => {
  const map = parsePerfMap(['100 1000 JS:*big', '200 10 JS:*a', '300 10 JS:*b'].join('\n'));
  assert.equal(map.name(0x400), 'JS:*big');
  assert.equal(map.name(0x305), 'JS:*b');
});

test('perf map: read from a file; a missing file is an empty map', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-perf-map-'));
  try {
    const file = join(dir, 'perf-1.map');
    writeFileSync(file, '7f0000001000 20 JS:^run node:internal/x:1:1\n');
    const map = readPerfMap(file);
    assert.equal(map.name(0x7f0000001010), 'JS:^run node:internal/x:1:1');
    assert.equal(readPerfMap(join(dir, 'missing.map')).size, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
