// The real CLI: first start prints one key line, the key works, 401 without it; SIGTERM finishes in-flight
// requests before exiting; projects/keys commands; PGlite by default. Without SIGHTFLOW_ADMIN_TOKEN, the first
// serve generates an admin token in the data dir and prints it once with the console's address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { availableParallelism } from 'node:os';
import { runCli, serve, useDist, type Served } from '../helpers/cli.js';
import { freshDatabaseUrl, backend } from '../helpers/app.js';
import { ensureConsoleBuilt } from '../helpers/console-build.js';

test('first start prints a key; /v1 works with it and is 401 without; SIGTERM drains in-flight requests', {
  timeout: 120_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-cli-'));
  const databaseUrl = await freshDatabaseUrl();
  const env: Record<string, string> = {
    SIGHTFLOW_ADMIN_TOKEN: 'adm',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  try {
    const s = await serve(['--data-dir', dataDir], env);
    // The image work's threads: one a core (at least libuv's 4) through the launcher that `./quickstart serve`
    // runs (CI runs the built CLI through it), libuv's 4 when the sources start without it.
    const listening = s.lines
      .map((l) => (l.startsWith('{') ? JSON.parse(l) : {}))
      .find((j) => j.msg === 'sightflow listening');
    const given = process.env.UV_THREADPOOL_SIZE;
    assert.equal(listening.imageThreads, given ? Number(given) : useDist ? Math.max(4, availableParallelism()) : 4);
    const keyLines = s.lines.filter((l) => /sk_sf_/.test(l));
    assert.equal(keyLines.length, 1, 'exactly one line with the key');
    const key = /sk_sf_[A-Za-z0-9_-]{43}/.exec(keyLines[0]!)![0];
    const base = `http://127.0.0.1:${s.port}`;
    assert.equal((await fetch(`${base}/v1/project`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
    const anon = await fetch(`${base}/v1/project`);
    assert.equal(anon.status, 401);
    assert.equal(((await anon.json()) as { error: { type: string } }).error.type, 'authentication_error');
    assert.ok(!s.lines.some((l) => l.includes(key) && l.startsWith('{')), 'the key never appears in a JSON log line');
    // An admin token from the environment: nothing generated, written or printed.
    assert.ok(!existsSync(join(dataDir, 'admin-token')), 'no admin-token file with SIGHTFLOW_ADMIN_TOKEN set');
    assert.ok(!s.lines.some((l) => /admin token|sf_admin_/.test(l)), s.lines.join('\n'));

    // An in-flight request whose body is still arriving when SIGTERM comes is answered before exit. A first
    // request on the same connection is answered before the partial one is sent, so on a loaded machine the
    // server has surely taken the connection in hand (a request it has not yet parsed is not in flight).
    const sock = connect(s.port, '127.0.0.1');
    const body = JSON.stringify({ name: 'during-shutdown' });
    let received = '';
    let firstAnswered: () => void = () => {};
    const first = new Promise<void>((r) => {
      firstAnswered = r;
    });
    sock.on('data', (c) => {
      received += c;
      if (/\r\n\r\n/.test(received)) firstAnswered();
    });
    const response = new Promise<string>((r) => sock.on('close', () => r(received)));
    sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await first;
    await new Promise((r) => setTimeout(r, 100));
    received = '';
    sock.write(
      `POST /admin/v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer adm\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 300));
    s.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    sock.write(body.slice(5));
    assert.match(await response, /^HTTP\/1\.1 201 /);
    assert.equal(await s.exited, 0, s.stderr() + s.lines.slice(-5).join('\n'));

    // Second start on the same database: no new key is printed.
    const again = await serve(['--data-dir', dataDir], env);
    assert.equal(again.lines.filter((l) => /sk_sf_/.test(l)).length, 0);
    again.child.kill('SIGINT');
    assert.equal(await again.exited, 0, again.stderr() + again.lines.slice(-5).join('\n'));

    // Management commands against the same database.
    const created = await runCli(['projects', 'create', 'cli-project', '--data-dir', dataDir], env);
    assert.equal(created.code, 0, created.stderr);
    const listed = await runCli(['projects', 'list', '--data-dir', dataDir], env);
    assert.match(listed.stdout, /\tdefault\t/);
    assert.match(listed.stdout, /\tcli-project\t/);
    const k = await runCli(['keys', 'create', '--project', 'cli-project', '--name', 'ci', '--data-dir', dataDir], env);
    assert.equal(k.code, 0, k.stderr);
    const newKey = k.stdout.trim();
    assert.match(newKey, /^sk_sf_[A-Za-z0-9_-]{43}$/);
    const keys = await runCli(['keys', 'list', '--project', 'cli-project', '--data-dir', dataDir], env);
    assert.ok(keys.stdout.includes(`sk_sf_...${newKey.slice(-4)}`) && !keys.stdout.includes(newKey));
    const d = await runCli(['keys', 'disable', `sk_sf_...${newKey.slice(-4)}`, '--data-dir', dataDir], env);
    assert.equal(d.code, 0, d.stderr);
    assert.match((await runCli(['keys', 'list', '--data-dir', dataDir], env)).stdout, /\tdisabled\t/);
    const bad = await runCli(['keys', 'create', '--project', 'nope', '--name', 'x', '--data-dir', dataDir], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /no project nope/);
    assert.equal((await runCli(['migrate', '--data-dir', dataDir], env)).code, 0);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

const CONSOLE_LINE =
  /^sightflow: console at http:\/\/([^/]+)\/console, admin token (sf_admin_[A-Za-z0-9_-]{43}) \(kept in (.+)\)$/;

test('without SIGHTFLOW_ADMIN_TOKEN the first serve generates an admin token, prints it once and keeps it in the data dir', {
  timeout: 120_000,
}, async () => {
  ensureConsoleBuilt();
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-cli-admin-'));
  const databaseUrl = await freshDatabaseUrl();
  // '' counts as unset, so a SIGHTFLOW_ADMIN_TOKEN in the test's own environment does not leak in.
  const env: Record<string, string> = {
    SIGHTFLOW_ADMIN_TOKEN: '',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  const admin = (port: number, token: string) =>
    fetch(`http://127.0.0.1:${port}/admin/v1/projects`, { headers: { authorization: `Bearer ${token}` } });
  const plain = (lines: string[]) => lines.filter((l) => !l.startsWith('{'));
  // A failed assertion must not leave a server running (it would keep the test process alive).
  const started: Served[] = [];
  const start = async (args: string[], e: Record<string, string>) => {
    const x = await serve(args, e);
    started.push(x);
    return x;
  };
  try {
    // Listening on every address: the printed URL says localhost, with the port actually bound.
    const s = await start(['--data-dir', dataDir, '--host', '0.0.0.0'], env);
    const printed = plain(s.lines);
    assert.equal(printed.length, 2, s.lines.join('\n'));
    assert.match(
      printed[0]!,
      /^sightflow: created project "default" with API key sk_sf_[A-Za-z0-9_-]{43} \(shown once; keep it\)$/,
    );
    const m = CONSOLE_LINE.exec(printed[1]!);
    assert.ok(m, `console line: ${printed[1]}`);
    const [, hostPort, token, kept] = m;
    assert.equal(hostPort, `localhost:${s.port}`);
    const file = join(dataDir, 'admin-token');
    assert.equal(kept, file);
    assert.equal(readFileSync(file, 'utf8').trim(), token);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    // Both lines come before the 'sightflow listening' log line.
    const listening = s.lines.findIndex((l) => l.includes('"msg":"sightflow listening"'));
    assert.ok(
      s.lines.indexOf(printed[0]!) < s.lines.indexOf(printed[1]!) && s.lines.indexOf(printed[1]!) < listening,
      s.lines.join('\n'),
    );
    assert.ok(
      !s.lines.some((l) => l.startsWith('{') && l.includes(token!)),
      'the token never appears in a JSON log line',
    );

    const ok = await admin(s.port, token!);
    assert.equal(ok.status, 200);
    assert.ok(((await ok.json()) as { data: { name: string }[] }).data.some((p) => p.name === 'default'));
    assert.equal((await admin(s.port, `${token}x`)).status, 401);
    assert.equal((await fetch(`http://127.0.0.1:${s.port}/console`)).status, 200);
    s.child.kill('SIGINT');
    assert.equal(await s.exited, 0, s.stderr() + s.lines.slice(-5).join('\n'));

    // Second start on the same data dir: neither line again; the kept token still works.
    const again = await start(['--data-dir', dataDir], env);
    assert.deepEqual(plain(again.lines), []);
    assert.equal((await admin(again.port, token!)).status, 200);
    again.child.kill('SIGINT');
    assert.equal(await again.exited, 0, again.stderr() + again.lines.slice(-5).join('\n'));

    // SIGHTFLOW_ADMIN_TOKEN wins over the file, which is left as it was.
    const explicit = await start(['--data-dir', dataDir], { ...env, SIGHTFLOW_ADMIN_TOKEN: 'explicit-admin' });
    assert.deepEqual(plain(explicit.lines), []);
    assert.equal((await admin(explicit.port, 'explicit-admin')).status, 200);
    assert.equal((await admin(explicit.port, token!)).status, 401);
    assert.equal(readFileSync(file, 'utf8').trim(), token);
    explicit.child.kill('SIGINT');
    assert.equal(await explicit.exited, 0, explicit.stderr() + explicit.lines.slice(-5).join('\n'));

    // Other commands never create the file.
    rmSync(file);
    assert.equal((await runCli(['projects', 'list', '--data-dir', dataDir], env)).code, 0);
    assert.equal((await runCli(['migrate', '--data-dir', dataDir], env)).code, 0);
    assert.ok(!existsSync(file), 'only serve generates the admin token');
  } finally {
    for (const x of started) if (x.child.exitCode === null && x.child.signalCode === null) x.child.kill('SIGKILL');
    await Promise.all(started.map((x) => x.exited));
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('PGlite is the default backend', {
  skip: backend === 'postgres' ? 'PGlite only (the PostgreSQL run sets DATABASE_URL)' : false,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-cli-'));
  try {
    const r = await runCli(['migrate', '--data-dir', dataDir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /migrations applied/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
