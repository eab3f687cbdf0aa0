// A throwaway PostgreSQL cluster for the test suite: initdb + pg_ctl (Debian's postgresql) on a free port
// under a temp dir, run as the `postgres` user when we are root. `start` prints shell exports; `stop` removes it.
//   eval "$(node --import tsx test/helpers/pg-cluster.ts start)"; ...; node --import tsx test/helpers/pg-cluster.ts stop
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stablePort } from './ports.js';

function binDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions.length)
    throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)');
  return join(base, versions[0]!, 'bin');
}

function asPostgres(cmd: string, args: string[]): string {
  const isRoot = process.getuid?.() === 0;
  return isRoot
    ? execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export async function startCluster(): Promise<{ url: string; dir: string }> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-pg-'));
  chmodSync(dir, 0o777);
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
  const data = join(dir, 'data');
  asPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await stablePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', 'start']);
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, dir };
}

export function stopCluster(dir: string): void {
  try {
    asPostgres(join(binDir(), 'pg_ctl'), ['-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop']);
  } catch {
    /* already down */
  }
  rmSync(dir, { recursive: true, force: true });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cmd = process.argv[2];
  if (cmd === 'start') {
    const { url, dir } = await startCluster();
    process.stdout.write(`export SIGHTFLOW_TEST_PG_URL='${url}' SIGHTFLOW_TEST_PG_DIR='${dir}'\n`);
  } else if (cmd === 'stop') {
    const dir = process.env.SIGHTFLOW_TEST_PG_DIR;
    if (dir) stopCluster(dir);
  } else {
    process.stderr.write('usage: pg-cluster.ts start|stop\n');
    process.exit(2);
  }
}
