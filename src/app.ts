// Builds a running sightflow from a config: database (migrated), services, routes, HTTP server.
// Used by `sightflow serve` and by the tests (port 0), so both run the same thing.
import { VERSION } from './base/paths.js';
import type { Config } from './config/index.js';
import { openMigratedDb } from './migrated-db.js';
import { createLogger, requestLogger, type Logger } from './base/log.js';
import { Projects } from './auth/projects.js';
import { Authenticator } from './auth/authenticator.js';
import { RateLimiter } from './auth/rate-limit.js';
import { UsageLedger } from './usage/ledger.js';
import { HttpServer } from './http/server.js';
import { systemRoutes } from './system/system.routes.js';
import { modelsRoutes } from './models/models.routes.js';
import { projectsModule, projectsPart } from './projects/projects.module.js';
import type { Services } from './services/services.js';
import { BlobStore } from './store/blobs.js';
import { loadOrCreateSigningSecret, presign } from './store/presign.js';
import { loadOrCreateAdminToken } from './store/secret-file.js';
import { filesModule, filesPart } from './files/files.module.js';
import { ModelsService } from './models/models-service.js';
import { detectorPreprocess } from './detection/image-preprocess.js';
import { useAddonPath } from './native/load.js';
import { visionModule, visionPart } from './vision/vision.module.js';
import { TaskModels } from './task-models/task-models.js';
import { videoModule, videoPart } from './video/video.module.js';
import { analyticsModule, analyticsPart } from './video/analytics/analytics.module.js';
import { momentsModule, momentsPart } from './video/moments/moments.module.js';
import type { Router } from './http/router.js';
import type { CollectionsPort } from './services/collections-port.js';
import type { ProviderSource } from './video/worker/worker.js';
import { vectorsModule, vectorsPart, workerCollections } from './vectors/vectors.module.js';
import type { Module, ModulePart } from './base/module.js';
import { mcpModule, mcpPart } from './mcp/mcp.module.js';
import { consoleModule, consolePart } from './console/console.module.js';
import { modelsModule, modelsPart } from './models/models.module.js';
import type { RouteDef } from './http/route.js';
import { enableMetrics } from './metrics/registry.js';
import { watchModels } from './metrics/models.js';
import { watchDbPool } from './metrics/db.js';
import { watchGpus } from './metrics/gpu.js';
import { cachedGpuStatus } from './native/gpu.js';
import { countingRequests, observeRequest, watchInFlight } from './metrics/http.js';
import { FrontPool } from './http/fronts/front-pool.js';
import { freePort } from './http/fronts/free-port.js';
import type { VisionCalls } from './http/fronts/front-wire.js';
import { listenMetrics, type MetricsListener } from './metrics/server.js';
import { openOtlpRecorder } from './tracing/otlp.js';
import { startSpanExport, stopSpanExport } from './tracing/spans.js';
import { spanningRequests } from './tracing/request-spans.js';
import type { ShutdownProgress } from './base/shutdown-deadline.js';
import { tuneHeap } from './base/heap-tuning.js';

export interface App {
  services: Services;
  server: HttpServer;
  port: number;
  /** Printed once on the first start of an empty database. */
  bootstrapKey: string | null;
  /** The token that guards /admin/v1: config.adminToken, else the data dir's (when asked for); null: admin API off. */
  adminToken: string | null;
  /** The metrics port (SIGHTFLOW_METRICS_PORT) as bound; null: metrics off. */
  metricsPort: number | null;
  /** Set when this start generated the admin token and wrote it to `path`; like bootstrapKey, shown once. */
  createdAdminToken: { token: string; path: string } | null;
  /** The vectors part's collections as other parts write them (benches write moments' items through it). */
  collections?: CollectionsPort;
  /** Stops serving, then everything else; `progress` says which step it is in (for a deadline's log line). */
  stop(progress?: ShutdownProgress): Promise<void>;
}

/**
 * Every part in order: its name and tables, known before any service exists (migrated before anything is
 * built). modules() builds the same parts and answers them in this order, which is also the order of the
 * routes in the API description and of starting (stopping: reversed).
 */
export const PARTS: readonly ModulePart[] = [
  projectsPart,
  filesPart,
  visionPart,
  videoPart,
  analyticsPart,
  momentsPart,
  vectorsPart,
  mcpPart,
  consolePart,
  modelsPart,
];

// The migrations of the parts above, in their order, and the database with them applied: in a file of their
// own so that the CLI's database commands need not import the service.
export { allMigrations, openMigratedDb } from './migrated-db.js';

export async function openServices(config: Config, log: Logger = createLogger(config.logLevel)): Promise<Services> {
  if (config.native.addonPath) useAddonPath(config.native.addonPath);
  tuneHeap(config.heapGrowingPercent);
  const db = await openMigratedDb(config);
  const signingSecret = config.signingSecret ?? (await loadOrCreateSigningSecret(config.dataDir));
  const models = await ModelsService.open(config.dataDir, config.modelsDir, log, config.inference, {
    syncMs: config.models.syncMs,
  });
  // A detector's graph can take its image as bytes from its first load on (SIGHTFLOW_INFERENCE_UINT8_INPUT).
  models.runtime.imagePreprocess = detectorPreprocess(models.registry);
  const taskModels = new TaskModels(models);
  models.onChange((c) => taskModels.modelsChanged([...c.removed, ...c.changed]));
  return Object.freeze({
    config,
    log,
    db,
    projects: new Projects(db),
    usage: new UsageLedger(db, (err, e) =>
      log.error({ err, endpoint: e.endpoint, project: e.projectId }, 'usage ledger write failed'),
    ),
    version: VERSION,
    gpus: cachedGpuStatus(1000, config.inference.nvmlLibrary),
    readiness: new Map([
      ['models', () => models.isReady()],
      // With SIGHTFLOW_GPU_REQUIRED, a model that could not start on its GPU takes the node out of rotation.
      ...(models.runtime.gpuRequired ? [['gpu', () => models.runtime.gpuFailures.size === 0] as const] : []),
    ]),
    models,
    taskModels,
    blobs: BlobStore.forDataDir(config.dataDir),
    signingSecret,
    presign: (key: string, expiresInS?: number) => presign(key, { secret: signingSecret, expiresInS }),
  });
}

/**
 * Turns metrics on and opens the metrics port when SIGHTFLOW_METRICS_PORT is set (serve and worker alike);
 * null when it is not. The models' gauges are read from this process's runtime at scrape time, the GPUs' from
 * the driver.
 */
export async function startMetrics(s: Services): Promise<MetricsListener | null> {
  const m = s.config.metrics;
  if (m.port === undefined) return null;
  enableMetrics({ projectLabel: m.projectLabel });
  const unwatchModels = watchModels(() =>
    s.models.runtime
      .handles()
      .map((h) => ({ id: h.id, runs: h.stats.runs, state: h.state(), lanes: h.lanes, sessions: h.sessionsByDevice() })),
  );
  const unwatchDb = watchDbPool(() => s.db.poolStats?.() ?? null);
  const unwatchGpus = watchGpus(s.gpus);
  const l = await listenMetrics(m.host, m.port, (err) => s.log.error({ err }, 'metrics collection failed'));
  // Not `port`: scripts that wait for the API's port read the first `"port"` of the log.
  s.log.info({ metricsPort: l.port, host: m.host }, 'metrics listening');
  return {
    port: l.port,
    close: async () => {
      unwatchModels();
      unwatchDb();
      unwatchGpus();
      await l.close();
    },
  };
}

/**
 * Exports spans over OTLP when an endpoint is set (serve and worker alike); null when not. The OpenTelemetry
 * packages are loaded by this call only (tracing/otlp.ts), so without an endpoint none of them is in memory.
 */
export async function startTracing(s: Services): Promise<{ close(): Promise<void> } | null> {
  const o = s.config.otlp;
  if (!o) return null;
  // The URL without a query or credentials in it: the log is no place for a collector's secret.
  const u = new URL(o.url);
  const endpoint = `${u.origin}${u.pathname}`;
  const recorder = await openOtlpRecorder(o, s.version, s.config.shutdownTimeoutMs, (err, droppedSpans) =>
    s.log.warn({ err, droppedSpans, endpoint }, 'span export failed; spans were dropped'),
  );
  startSpanExport(recorder);
  s.log.info({ endpoint, serviceName: o.serviceName }, 'exporting spans over OTLP');
  return { close: () => stopSpanExport(recorder) };
}

/** Parts a caller supplies in place of what the configuration builds (the tests inject video providers). */
export interface AppOptions {
  /** The video workers' providers, instead of the lists built from SIGHTFLOW_PROVIDERS. */
  videoProviders?: ProviderSource;
  /**
   * Without config.adminToken, load the admin token from <dataDir>/admin-token or generate it there, so the
   * admin API and the console work out of the box. `sightflow serve` asks for it; otherwise the admin API
   * stays off unless a token is configured.
   */
  adminTokenFromDataDir?: boolean;
  /**
   * The CLI entry front processes run (`sightflow serve` passes its own file): with SIGHTFLOW_HTTP_FRONTS above
   * 0 they take the port and this process listens on loopback for them. Without it the setting is ignored,
   * with a warning.
   */
  frontEntry?: string;
}

/**
 * The parts that run beside the routes; `worker` decides whether this process runs video workers. The ports
 * one part hands another are wired here, in the order they flow: the vectors part's collections into the video
 * part (its index step writes moments), the video part's ports into its rooms with an API of their own, the
 * route table into MCP. Vision is built before vectors, as the model catalogue lists their models in that order.
 */
export function modules(s: Services, opts: { worker: boolean; router?: Router } & AppOptions): Module[] {
  const projects = projectsModule(s);
  const files = filesModule(s);
  const vision = visionModule(s);
  const vectors = vectorsModule(s);
  const video = videoModule(s, {
    worker: opts.worker,
    providers: opts.videoProviders,
    collections: vectors.collections,
  });
  const built: Record<string, Module> = {
    projects,
    files,
    vision,
    video,
    vectors,
    analytics: analyticsModule(s, video.ports),
    moments: momentsModule(),
    mcp: mcpModule(s, { router: () => opts.router }),
    console: consoleModule(s),
    models: modelsModule(s),
  };
  return PARTS.map((p) => built[p.name]!);
}

/**
 * What `sightflow worker` runs: the video part with its workers on, and nothing HTTP-only (no MCP, console,
 * admin, file serving) nor the vectors part, so a worker process opens no vector index and loads no embedding
 * model at start. Its index step writes through the collections port alone (workerCollections): the serving
 * nodes' indexes catch up. The detector, OCR and embedding models the video steps use load on the first task
 * that needs them.
 */
export function workerModules(s: Services, opts: AppOptions = {}): Module[] {
  return [
    videoModule(s, { worker: true, providers: opts.videoProviders, collections: workerCollections(s) }),
    modelsModule(s, { routes: false }),
  ];
}

/**
 * Every route: the system part's probes and API description, the models part's catalogue (GET /v1/models,
 * listed before the parts whose models it gathers), then each part's own routes in part order. The order is
 * the API description's.
 */
export function allRouteModules(s: Services, mods: Module[], all: () => RouteDef[]): RouteDef[] {
  return [...systemRoutes(s, all), ...modelsRoutes(s.models.catalogue), ...mods.flatMap((m) => m.routes)];
}

/**
 * The one shutdown sequence after the HTTP server (if any) has stopped, for `serve` and `worker` alike:
 * modules in reverse order, the models, queued usage rows (so no billed work is lost), then the database.
 */
export async function stopServices(
  services: Services,
  mods: Module[],
  progress: ShutdownProgress = { step: '' },
): Promise<void> {
  for (const m of [...mods].reverse()) {
    progress.step = `stopping the ${m.name} part`;
    await m.stop?.();
  }
  progress.step = 'closing the models';
  await services.models.close();
  progress.step = 'writing queued usage rows';
  await services.usage.flush();
  progress.step = 'closing the database';
  await services.db.close();
}

export async function startApp(config: Config, log?: Logger, opts: AppOptions = {}): Promise<App> {
  const services = await openServices(config, log);
  const bootstrap = await services.projects.bootstrap();
  const adminFile =
    !config.adminToken && opts.adminTokenFromDataDir ? await loadOrCreateAdminToken(config.dataDir) : null;
  const adminToken = config.adminToken ?? adminFile?.value ?? null;
  const metrics = await startMetrics(services);
  const tracing = await startTracing(services);
  const logged = requestLogger(services.log);
  const spanned = tracing ? spanningRequests(logged) : logged;
  const rateLimiter = new RateLimiter(config.rateLimit.rps, config.rateLimit.burst);
  const server = new HttpServer({
    log: services.log,
    requestLog: metrics ? countingRequests(spanned) : spanned,
    authenticator: new Authenticator(services.projects, config.keyCacheMs),
    rateLimiter,
    adminToken: adminToken ?? undefined,
    maxJsonBytes: config.maxJsonBytes,
    bodyTimeoutMs: config.bodyTimeoutMs,
  });
  const unwatchInFlight = metrics ? watchInFlight(() => server.requestsInFlight) : () => {};
  const mods = modules(services, { worker: config.inProcessWorker, router: server.router, ...opts });
  for (const r of allRouteModules(services, mods, () => server.router.all())) server.route(r);
  for (const m of mods) await m.start?.();
  if (config.httpFronts > 0 && !opts.frontEntry)
    services.log.warn({ httpFronts: config.httpFronts }, 'front processes start only with `sightflow serve`');
  const fronts =
    config.httpFronts > 0 && opts.frontEntry
      ? await startFronts(config, services, opts.frontEntry, server, rateLimiter, mods)
      : null;
  const port = fronts ? fronts.port : await server.listen(config.host, config.port);
  let stopping: Promise<void> | null = null;
  return {
    services,
    server,
    port,
    bootstrapKey: bootstrap?.key ?? null,
    adminToken,
    metricsPort: metrics?.port ?? null,
    createdAdminToken: adminFile?.created ? { token: adminFile.value, path: adminFile.path } : null,
    collections: (mods.find((m) => m.name === 'vectors') as { collections?: CollectionsPort } | undefined)?.collections,
    stop: (progress: ShutdownProgress = { step: '' }) =>
      (stopping ??= (async () => {
        // The fronts first: their requests need this process to answer them.
        progress.step = 'stopping the front processes';
        await fronts?.stop();
        progress.step = 'finishing in-flight requests';
        await server.stop(config.shutdownTimeoutMs);
        await stopServices(services, mods, progress);
        unwatchInFlight();
        progress.step = 'closing the metrics endpoint';
        await metrics?.close();
        // Last: the spans of requests and tasks that ended while stopping go too.
        progress.step = 'sending the last spans';
        await tracing?.close();
      })()),
  };
}

/**
 * The front processes (SIGHTFLOW_HTTP_FRONTS) on the configured port, this process on a loopback port that only
 * they use. With port 0 a free port is chosen; if another process takes it before the fronts do, another.
 */
async function startFronts(
  config: Config,
  services: Services,
  entry: string,
  server: HttpServer,
  rateLimiter: RateLimiter,
  mods: Module[],
): Promise<FrontPool> {
  const vision = (mods.find((m) => m.name === 'vision') as { service?: VisionCalls } | undefined)?.service;
  if (!vision) throw new Error('front processes need the vision module');
  const ownerPort = await server.listen('127.0.0.1', 0);
  for (let attempt = 1; ; attempt++) {
    const pool = new FrontPool({
      count: config.httpFronts,
      entry,
      host: config.host,
      port: config.port === 0 ? await freePort(config.host) : config.port,
      ownerPort,
      log: services.log,
      calls: vision,
      keys: services.projects,
      rateLimiter,
      observe: observeRequest,
      drainMs: config.shutdownTimeoutMs,
    });
    try {
      await pool.start();
      return pool;
    } catch (e) {
      await pool.stop();
      if (config.port !== 0 || attempt === 3) throw e;
    }
  }
}
