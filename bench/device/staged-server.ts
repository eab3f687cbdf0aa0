// The bundled sightflow server (scripts/lib/stage-server.sh lays it out in server/) as the GPU check's rows run
// it: a child process through its launcher (server/sightflow.cjs, as `sightflow` runs), on a fresh data dir,
// port 0, its first API key read from its log.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';

export interface Server {
  child: ChildProcess;
  /** What the runtime runs on, from its start-up line. */
  providers: string;
  /** Threads of libuv's pool (the image work), as its start-up line says. */
  imageThreads: number;
  port: number;
  key: string;
  /** The admin token it was started with (SIGHTFLOW_ADMIN_TOKEN). */
  adminToken: string;
  log: string[];
}

/** Where the staged server, the models and the providers it runs on are. */
export interface ServerPlace {
  server: string;
  models: string;
  providers: string;
}

/**
 * Starts the bundled server on a fresh data dir and waits for its port and its first API key; `onLine` sees
 * every line it logs (the last 200 are kept for errors).
 */
export async function startServer(
  a: ServerPlace,
  dataDir: string,
  env: Record<string, string>,
  onLine?: (line: string) => void,
): Promise<Server> {
  const adminToken = `check-${process.pid}-${Date.now()}`;
  const child = spawn(
    process.execPath,
    [join(a.server, 'sightflow.cjs'), 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
    {
      env: {
        ...process.env,
        SIGHTFLOW_LOG_LEVEL: 'info',
        SIGHTFLOW_MODELS_DIR: a.models,
        SIGHTFLOW_ADDON_PATH: join(a.server, 'build', 'Release', 'sightflow.node'),
        SIGHTFLOW_EXECUTION_PROVIDERS: a.providers,
        SIGHTFLOW_ADMIN_TOKEN: adminToken,
        // The check's servers share templates of a fresh embedded database (gpu-check.sh names one folder for
        // the whole check): the first runs initdb and the migrations, each later one starts from a copy in a
        // fraction of that time.
        SIGHTFLOW_PGLITE_TEMPLATE_DIR:
          process.env.SIGHTFLOW_PGLITE_TEMPLATE_DIR ?? join(dirname(dataDir), 'pglite-templates'),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const log: string[] = [];
  let port = 0;
  let imageThreads = 0;
  let key = '';
  let ran = '';
  const ready = new Promise<void>((res, rej) => {
    const timer = setTimeout(
      () => rej(new Error(`server did not start in 120 s:\n${log.slice(-20).join('\n')}`)),
      120_000,
    );
    const seen = (line: string) => {
      log.push(line);
      if (log.length > 200) log.shift();
      onLine?.(line);
      const k = /with API key (sk_sf_\S+)/.exec(line);
      if (k) key = k[1]!;
      if (line.includes('"sightflow listening"')) {
        const j = JSON.parse(line) as { port: number; imageThreads: number };
        port = j.port;
        imageThreads = j.imageThreads;
      }
      // The providers the runtime took (a GPU provider asked for where its library is missing falls back to cpu).
      if (line.includes('"msg":"inference runs on')) ran = (JSON.parse(line).providers as string[]).join(',');
      if (port && key) {
        clearTimeout(timer);
        res();
      }
    };
    for (const s of [child.stdout!, child.stderr!]) {
      let rest = '';
      s.on('data', (d: Buffer) => {
        const lines = (rest + d.toString()).split('\n');
        rest = lines.pop()!;
        for (const l of lines) seen(l);
      });
    }
    child.on('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`server exited (${code}) before it was ready:\n${log.slice(-20).join('\n')}`));
    });
  });
  await ready;
  return { child, port, key, adminToken, log, providers: ran || '?', imageThreads };
}

export async function stopServer(s: Server): Promise<void> {
  if (s.child.exitCode !== null) return;
  const gone = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  const t = setTimeout(() => s.child.kill('SIGKILL'), 20_000);
  await gone;
  clearTimeout(t);
}
