#!/usr/bin/env node
// The `sightflow` CLI: serve | worker | migrate | projects | keys | models.
// Each command imports what it runs when it runs: the whole service (app.js: models, video, every route) is
// a large module graph, and a front process (`__front`), `--help` or a mistyped command loads none of it.
import { ConfigError, loadProcessConfig, type CliFlags, type Config } from './config/index.js';
import { parseArgs, type ParsedArgs } from './base/cli-args.js';
import type { Projects } from './auth/projects.js';
import type { Logger } from './base/log.js';
import { VERSION } from './base/paths.js';
import { armShutdownDeadline, SHUTDOWN_GRACE_MS, type ShutdownProgress } from './base/shutdown-deadline.js';
import { fileURLToPath } from 'node:url';

type AppModule = typeof import('./app.js');

const USAGE = `sightflow ${VERSION}
usage: sightflow <command> [options]
  serve      [--port N] [--host H] [--data-dir D] [--no-worker]   start the API (default port 8080)
  worker     [--data-dir D]                                       run video workers only
  migrate    [--data-dir D]                                       apply database migrations
  projects   create <name> | list
  keys       create --project <id|name> --name <text> | list [--project <id|name>] | disable <id-or-hint>
  models     list | prepare | verify | add <file|url|owner/repo[@rev]:path> [--id] [--task] [--labels] | settings <id> [--sessions N ...] | remove <id>
Environment: SIGHTFLOW_PORT, SIGHTFLOW_HOST, SIGHTFLOW_DATA_DIR, DATABASE_URL, SIGHTFLOW_ADMIN_TOKEN, ... (see docs/configuration.md)`;

function flagsOf(a: ParsedArgs): CliFlags {
  const port = a.flags.port;
  if (port !== undefined && (port === true || !/^\d+$/.test(port)))
    fail(`--port expects a number, got ${String(port)}`);
  return {
    port: port === undefined ? undefined : Number(port),
    host: typeof a.flags.host === 'string' ? a.flags.host : undefined,
    dataDir: typeof a.flags['data-dir'] === 'string' ? a.flags['data-dir'] : undefined,
    noWorker: a.flags['no-worker'] === true ? true : undefined,
  };
}

function fail(msg: string): never {
  process.stderr.write(`sightflow: ${msg}\n`);
  process.exit(2);
}

async function serve(config: Config): Promise<void> {
  // Signal handlers first: a SIGTERM/SIGINT during start-up must also end in a clean shutdown.
  let signals = 0;
  let app: Awaited<ReturnType<AppModule['startApp']>> | null = null;
  let pending: string | null = null;
  const shutdown = (sig: string) => {
    if (++signals > 1) process.exit(1);
    if (!app) {
      pending = sig;
      return;
    }
    const { log } = app.services;
    log.info({ signal: sig }, 'shutting down: finishing in-flight requests');
    const progress: ShutdownProgress = { step: '' };
    armShutdownDeadline(log, config.shutdownTimeoutMs + SHUTDOWN_GRACE_MS, progress);
    app.stop(progress).then(
      () => {
        log.info('stopped');
        log.flush();
        process.exit(0);
      },
      (e) => {
        log.error({ err: e }, 'shutdown failed');
        log.flush();
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  const [{ startApp }, { warmTokenizer }, { mcpSdk }] = await Promise.all([
    import('./app.js'),
    import('./usage/tokens.js'),
    import('./mcp/sdk.js'),
  ]);
  // The tokenizer and the MCP SDK load lazily everywhere else (CLI commands, fronts, tests); a server loads them
  // before it listens, so that no request waits for them.
  await Promise.all([warmTokenizer(), mcpSdk()]);
  app = await startApp(config, undefined, { adminTokenFromDataDir: true, frontEntry: fileURLToPath(import.meta.url) });
  const { log } = app.services;
  if (app.bootstrapKey) {
    // The one line a newcomer needs; printed to stdout once, on the first start of an empty database.
    process.stdout.write(
      `sightflow: created project "default" with API key ${app.bootstrapKey} (shown once; keep it)\n`,
    );
  }
  if (app.createdAdminToken) {
    // Printed only when this start generated the token; later starts leave it in the file. Scripts parse
    // this line, so its shape stays fixed.
    const { token, path } = app.createdAdminToken;
    process.stdout.write(
      `sightflow: console at ${consoleUrl(config.host, app.port)}, admin token ${token} (kept in ${path})\n`,
    );
  }
  log.info(
    {
      port: app.port,
      host: config.host,
      db: app.services.db.kind,
      dataDir: config.dataDir,
      imageThreads: config.imageThreads,
    },
    'sightflow listening',
  );
  // Supervisors and tests wait for this line; do not leave it in the log buffer.
  log.flush();
  logGpus(log, config.inference.nvmlLibrary);
  if (pending) {
    signals--;
    shutdown(pending);
  }
}

/**
 * The host's NVIDIA cards, logged once after the process's ready line (starting the driver's library may take
 * a moment): what an operator checks first on a GPU host. A host without a driver says why at debug level only.
 */
function logGpus(log: Logger, library: string): void {
  void import('./native/gpu.js')
    .then(({ gpuStatus }) => gpuStatus(library))
    .then(
      (g) => {
        if (!g.available) return log.debug({ reason: g.reason }, 'no NVIDIA GPU readings');
        const gpus = g.devices.map((d) => ({ index: d.index, name: d.name, memoryTotalBytes: d.memoryTotalBytes }));
        log.info({ driverVersion: g.driverVersion, gpus }, 'NVIDIA GPUs');
      },
      (err) => log.warn({ err }, 'the NVIDIA GPU readings failed'),
    );
}

/** Where a browser on this machine reaches the console: a wildcard listen address reads as localhost. */
function consoleUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}/console`;
}

/** `sightflow worker`: video workers only, no HTTP (scale-out nodes against a shared PostgreSQL). */
async function runWorker(config: Config): Promise<void> {
  // As in serve: handlers before start-up, so an early signal still shuts down cleanly.
  let signals = 0;
  let started: {
    services: Awaited<ReturnType<AppModule['openServices']>>;
    mods: ReturnType<AppModule['workerModules']>;
    metrics: Awaited<ReturnType<AppModule['startMetrics']>>;
    tracing: Awaited<ReturnType<AppModule['startTracing']>>;
  } | null = null;
  let pending = false;
  const shutdown = async () => {
    if (++signals > 1) process.exit(1);
    if (!started) {
      pending = true;
      return;
    }
    const { services, mods, metrics, tracing } = started;
    const progress: ShutdownProgress = { step: '' };
    // No HTTP to drain: the steps alone are bounded.
    armShutdownDeadline(services.log, SHUTDOWN_GRACE_MS, progress);
    await app.stopServices(services, mods, progress);
    progress.step = 'closing the metrics endpoint';
    await metrics?.close();
    progress.step = 'sending the last spans';
    await tracing?.close();
    services.log.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
  const app = await import('./app.js');
  const services = await app.openServices(config);
  const metrics = await app.startMetrics(services);
  const tracing = await app.startTracing(services);
  const mods = app.workerModules(services);
  for (const m of mods) await m.start?.();
  started = { services, mods, metrics, tracing };
  services.log.info({ db: services.db.kind }, 'sightflow worker running');
  logGpus(services.log, config.inference.nvmlLibrary);
  services.log.flush();
  if (pending) {
    signals--;
    await shutdown();
  }
}

/**
 * migrate, projects and keys touch the database alone: they open it (migrated) without the models, which
 * `serve` loads and checks at start (seconds a command, for nothing these commands use).
 */
async function withProjects<T>(config: Config, fn: (projects: Projects) => Promise<T>): Promise<T> {
  const [{ openMigratedDb }, { Projects }] = await Promise.all([
    import('./migrated-db.js'),
    import('./auth/projects.js'),
  ]);
  const db = await openMigratedDb(config);
  try {
    return await fn(new Projects(db));
  } finally {
    await db.close();
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const [cmd, sub, ...rest] = args.positionals;
  if (!cmd || args.flags.help || cmd === 'help') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  let config: Config;
  try {
    config = loadProcessConfig(flagsOf(args));
  } catch (e) {
    // A bad variable is a usage error like a bad flag: one line naming it, exit status 2.
    if (e instanceof ConfigError) fail(e.message);
    throw e;
  }
  switch (cmd) {
    case 'serve':
      return serve(config);
    case '__front': {
      // Not a command for people: `serve` starts its front processes this way (SIGHTFLOW_HTTP_FRONTS).
      const ownerPort = Number(args.flags['owner-port']);
      if (!Number.isInteger(ownerPort) || ownerPort <= 0) fail('__front is started by sightflow serve');
      const { runFront } = await import('./front.js');
      return runFront(config, ownerPort);
    }
    case 'worker':
      return runWorker(config);
    case 'migrate':
      return withProjects(config, async () => {
        process.stdout.write('migrations applied\n');
      });
    case 'projects':
      return withProjects(config, async (projects) => {
        if (sub === 'create') {
          const name = rest.join(' ').trim() || (typeof args.flags.name === 'string' ? args.flags.name : '');
          if (!name) fail('usage: sightflow projects create <name>');
          const p = await projects.create(name);
          process.stdout.write(`${p.id}\t${p.name}\t${p.created_at}\n`);
        } else if (sub === 'list' || !sub) {
          for (const p of await projects.list()) process.stdout.write(`${p.id}\t${p.name}\t${p.created_at}\n`);
        } else fail(`unknown projects command ${sub}`);
      });
    case 'keys':
      return withProjects(config, async (projects) => {
        const projectFlag = typeof args.flags.project === 'string' ? args.flags.project : undefined;
        const project = projectFlag ? await projects.find(projectFlag) : null;
        if (projectFlag && !project) fail(`no project ${projectFlag}`);
        if (sub === 'create') {
          const name = typeof args.flags.name === 'string' ? args.flags.name : '';
          if (!project || !name) fail('usage: sightflow keys create --project <id|name> --name <text>');
          const k = await projects.createKey(project.id, name);
          process.stdout.write(`${k.key}\n`);
          process.stderr.write(
            `created key ${k.id} (${k.hint}) in project ${project.name}; it is shown only this once\n`,
          );
        } else if (sub === 'list' || !sub) {
          for (const k of await projects.listKeys(project?.id)) {
            process.stdout.write(
              `${k.id}\t${k.project_id}\t${k.name}\t${k.hint}\t${k.disabled_at ? 'disabled' : 'active'}\t${k.created_at}\n`,
            );
          }
        } else if (sub === 'disable') {
          const which = rest[0];
          if (!which) fail('usage: sightflow keys disable <id-or-hint>');
          const found = (await projects.findKeys(which)).filter((k) => !project || k.project_id === project.id);
          if (found.length === 0) fail(`no key ${which}`);
          if (found.length > 1) fail(`${found.length} keys match ${which}; use the key id`);
          const k = await projects.disableKey(found[0]!.project_id, found[0]!.id);
          process.stdout.write(`disabled ${k!.id} (${k!.hint})\n`);
        } else fail(`unknown keys command ${sub}`);
      });
    case 'models': {
      const [{ modelsCli }, { checkModelOnSample }, { sharedModelStore }, { allMigrations }] = await Promise.all([
        import('./models/models-cli.js'),
        import('./detection/model-check.js'),
        import('./models/model-publish.js'),
        import('./migrated-db.js'),
      ]);
      process.exitCode = await modelsCli(
        [sub ?? 'list', ...rest, ...(args.flags.json ? ['--json'] : []), ...(args.flags.force ? ['--force'] : [])],
        {
          dataDir: config.dataDir,
          modelsDir: config.modelsDir,
          flags: args.flags,
          hubUrl: config.models.hubUrl,
          policy: { allowPrivate: config.allowPrivateUrls },
          check: checkModelOnSample,
          ...(config.databaseUrl ? sharedModelStore(config.databaseUrl, config.dataDir, allMigrations()) : {}),
        },
      );
      return;
    }
    default:
      fail(`unknown command ${cmd}\n${USAGE}`);
  }
}

main().catch((e) => {
  process.stderr.write(`sightflow: ${(e as Error).message}\n`);
  process.exit(1);
});
