// The log sink writes lines in order, within its flush interval when idle, at once when its buffer fills,
// and what is left at exit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LogSink } from '../../src/base/log-sink.js';

test('an idle sink writes its lines within the flush interval, in order', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-logsink-'));
  const fd = openSync(join(dir, 'out.log'), 'w');
  try {
    const sink = new LogSink(fd, 50);
    sink.write('one\n');
    sink.write('two\n');
    assert.equal(readFileSync(join(dir, 'out.log'), 'utf8'), '', 'buffered, not yet written');
    await sleep(200);
    assert.equal(readFileSync(join(dir, 'out.log'), 'utf8'), 'one\ntwo\n');
    // Lines over the buffer size and multi-byte text arrive whole and in order.
    const big = `${'x'.repeat(100_000)}\n`;
    sink.write('é漢\n');
    sink.write(big);
    sink.write('after\n');
    sink.flushSync();
    assert.equal(readFileSync(join(dir, 'out.log'), 'utf8'), `one\ntwo\né漢\n${big}after\n`);
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('lines still buffered when the process exits are written', () => {
  const script = `import { LogSink } from ${JSON.stringify(new URL('../../src/base/log-sink.ts', import.meta.url).href)};
    const s = new LogSink(1, 60_000); for (let i = 0; i < 3; i++) s.write('line ' + i + '\\n'); process.exit(0);`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  assert.equal(out, 'line 0\nline 1\nline 2\n');
});
