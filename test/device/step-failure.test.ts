// The GPU check's report of a step that failed as a whole names the error, not the last stack frames: read from
// the stderr of real Node processes that fail the ways a step does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { stepFailure } from '../../bench/device/step-failure.js';

const stderrOf = (code: string) =>
  spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' }).stderr;

test('a thrown error: its message and where it was thrown', () => {
  const s = stderrOf(
    "console.error('cameras: starting'); function parse() { throw new Error('camera-rows: bad row 2:none'); } parse();",
  );
  const got = stepFailure(s);
  assert.match(got, /^Error: camera-rows: bad row 2:none \(at parse /, got);
});

test('a system error with a code, and a rejection from an await', () => {
  const s = stderrOf("import { readFileSync } from 'node:fs'; readFileSync('/no/such/models/dir');");
  assert.match(stepFailure(s), /^Error: ENOENT: no such file or directory, open '\/no\/such\/models\/dir'/);
  const t = stderrOf("await Promise.reject(new TypeError('fetch failed'));");
  assert.match(stepFailure(t), /^TypeError: fetch failed/);
});

test('no error line: the last lines, and a word for nothing at all', () => {
  assert.equal(stepFailure('one\ntwo\nthree\nfour\n'), 'two | three | four');
  assert.equal(stepFailure(''), 'failed with nothing on stderr');
});
