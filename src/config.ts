// Environment and flags -> one typed config. Every variable is listed in README's configuration table.
import { resolve } from 'node:path';
import { cpus } from 'node:os';
import { z } from 'zod';

const bool = z.enum(['true', 'false', '1', '0', '']).transform((v) => v === 'true' || v === '1');
const int = (def: number) => z.coerce.number().int().nonnegative().default(def);

const EnvSchema = z.object({
  SIGHTFLOW_PORT: int(8080),
  SIGHTFLOW_HOST: z.string().default('0.0.0.0'),
  SIGHTFLOW_DATA_DIR: z.string().default('./data'),
  SIGHTFLOW_MODELS_DIR: z.string().optional(),
  DATABASE_URL: z.string().optional(),
  SIGHTFLOW_ADMIN_TOKEN: z.string().optional(),
  SIGHTFLOW_ALLOW_PRIVATE_URLS: bool.default(false),
  SIGHTFLOW_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  SIGHTFLOW_SIGNING_SECRET: z.string().optional(),
  SIGHTFLOW_RATE_LIMIT_RPS: z.coerce.number().nonnegative().default(0),
  SIGHTFLOW_RATE_LIMIT_BURST: z.coerce.number().nonnegative().default(0),
  SIGHTFLOW_KEY_CACHE_MS: int(2000),
  SIGHTFLOW_BODY_TIMEOUT_MS: int(30000),
  SIGHTFLOW_MAX_JSON_BYTES: int(30 * 1024 * 1024),
  SIGHTFLOW_PG_POOL_SIZE: int(10),
  SIGHTFLOW_SHUTDOWN_TIMEOUT_MS: int(10000),
  SIGHTFLOW_NO_WORKER: bool.default(false),
  SIGHTFLOW_WORKER_CONCURRENCY: int(Math.max(1, Math.floor(cpus().length / 2))),
});

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Prepared models; default <dataDir>/models. */
  modelsDir: string;
  databaseUrl?: string;
  /** SIGHTFLOW_ADMIN_TOKEN as set. The token in effect (this, or `serve`'s <dataDir>/admin-token) is App.adminToken. */
  adminToken?: string;
  allowPrivateUrls: boolean;
  logLevel: string;
  signingSecret?: string;
  rateLimit: { rps: number; burst: number };
  keyCacheMs: number;
  bodyTimeoutMs: number;
  maxJsonBytes: number;
  pgPoolSize: number;
  shutdownTimeoutMs: number;
  workerConcurrency: number;
  /** Run video workers inside `serve` (off with --no-worker / SIGHTFLOW_NO_WORKER=true). */
  inProcessWorker: boolean;
}

export interface CliFlags { port?: number; host?: string; dataDir?: string; noWorker?: boolean }

/** Parses environment variables with a zod schema; the error names the variable. Parts with their own settings use it too. */
export function parseEnv<T>(schema: z.ZodType<T>, env: NodeJS.ProcessEnv): T {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid configuration ${String(issue?.path.join('.'))}: ${issue?.message}`);
  }
  return parsed.data;
}

/** Flags win over environment variables, which win over defaults. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, flags: CliFlags = {}): Config {
  const e = parseEnv(EnvSchema, env);
  return {
    port: flags.port ?? e.SIGHTFLOW_PORT,
    host: flags.host ?? e.SIGHTFLOW_HOST,
    dataDir: resolve(flags.dataDir ?? e.SIGHTFLOW_DATA_DIR),
    modelsDir: resolve(e.SIGHTFLOW_MODELS_DIR ?? resolve(flags.dataDir ?? e.SIGHTFLOW_DATA_DIR, 'models')),
    databaseUrl: e.DATABASE_URL || undefined,
    adminToken: e.SIGHTFLOW_ADMIN_TOKEN || undefined,
    allowPrivateUrls: e.SIGHTFLOW_ALLOW_PRIVATE_URLS,
    logLevel: e.SIGHTFLOW_LOG_LEVEL,
    signingSecret: e.SIGHTFLOW_SIGNING_SECRET || undefined,
    rateLimit: { rps: e.SIGHTFLOW_RATE_LIMIT_RPS, burst: e.SIGHTFLOW_RATE_LIMIT_BURST || e.SIGHTFLOW_RATE_LIMIT_RPS },
    keyCacheMs: e.SIGHTFLOW_KEY_CACHE_MS,
    bodyTimeoutMs: e.SIGHTFLOW_BODY_TIMEOUT_MS,
    maxJsonBytes: e.SIGHTFLOW_MAX_JSON_BYTES,
    pgPoolSize: e.SIGHTFLOW_PG_POOL_SIZE,
    shutdownTimeoutMs: e.SIGHTFLOW_SHUTDOWN_TIMEOUT_MS,
    workerConcurrency: e.SIGHTFLOW_WORKER_CONCURRENCY,
    inProcessWorker: !(flags.noWorker ?? e.SIGHTFLOW_NO_WORKER),
  };
}
