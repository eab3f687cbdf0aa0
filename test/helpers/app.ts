// Test harness: a real sightflow (real HTTP server on port 0, real database) per test file.
// SIGHTFLOW_TEST_DB=postgres (with SIGHTFLOW_TEST_PG_URL from pg-cluster.ts) gives each app its own fresh
// database in the throwaway cluster; otherwise PGlite in a temp data dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config/index.js';
import { openServices, startApp, type App, type AppOptions } from '../../src/app.js';
import type { Services } from '../../src/services/services.js';
import type { Caller } from '../../src/usage/billing.js';
import { createLogger, type Logger } from '../../src/base/log.js';
import { projectRoot } from '../../src/base/paths.js';
import { checkResponse } from './contract.js';

export const backend: 'pglite' | 'postgres' = process.env.SIGHTFLOW_TEST_DB === 'postgres' ? 'postgres' : 'pglite';

export interface TestApp {
  app: App;
  url: string;
  key: string;
  projectId: string;
  adminToken: string;
  dataDir: string;
  databaseUrl?: string;
  config: Config;
  close(): Promise<void>;
}

/** A fresh database in the harness cluster (PostgreSQL runs), or undefined for PGlite runs. */
export async function freshDatabaseUrl(): Promise<string | undefined> {
  if (backend !== 'postgres') return undefined;
  const base = process.env.SIGHTFLOW_TEST_PG_URL;
  if (!base) throw new Error('SIGHTFLOW_TEST_DB=postgres needs SIGHTFLOW_TEST_PG_URL (see test/helpers/pg-cluster.ts)');
  const name = `sf_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  return base.replace(/\/[^/]*$/, `/${name}`);
}

/**
 * `log` replaces the app's logger (a test that asserts on log lines); `videoProviders` replaces the
 * in-process video worker's providers (e.g. `() => [new SyntheticProvider()]`, ./synthetic-provider.ts).
 */
function testConfig(dataDir: string, databaseUrl: string | undefined, env: Record<string, string>): Config {
  return loadConfig(
    {
      SIGHTFLOW_ADMIN_TOKEN: 'test-admin-token',
      SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true',
      SIGHTFLOW_LOG_LEVEL: process.env.SIGHTFLOW_TEST_LOG_LEVEL ?? 'silent',
      // Models prepared once by setup (scripts/setup.d/30-models.sh), shared by every test app.
      SIGHTFLOW_MODELS_DIR: process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models'),
      // Fresh embedded databases from a template rather than initdb (seconds of CPU per test app).
      SIGHTFLOW_PGLITE_TEMPLATE_DIR:
        process.env.SIGHTFLOW_PGLITE_TEMPLATE_DIR ?? join(projectRoot, '.tmp', 'pglite-templates'),
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...env,
    },
    { port: 0, host: '127.0.0.1', dataDir },
  );
}

export interface TestServices {
  s: Services;
  projectId: string;
  keyId: string;
  /** A caller of this project's key with a fresh (never aborted) signal unless one is given. */
  caller(signal?: AbortSignal): Caller;
  close(): Promise<void>;
}

/**
 * The services a use case runs on (real database, migrated; real models), without an HTTP server: for tests
 * that call a feature's service directly. One project with one key, like a first start.
 */
export async function openTestServices(env: Record<string, string> = {}): Promise<TestServices> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-svc-'));
  const config = testConfig(dataDir, await freshDatabaseUrl(), env);
  const s = await openServices(config, createLogger(config.logLevel));
  const project = (await s.projects.bootstrap())?.project ?? (await s.projects.list())[0]!;
  const keyId = (await s.projects.listKeys(project.id))[0]!.id;
  return {
    s,
    projectId: project.id,
    keyId,
    caller: (signal = new AbortController().signal) => ({ projectId: project.id, keyId, signal, log: s.log }),
    async close() {
      await s.models.close();
      await s.usage.flush();
      await s.db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function startTestApp(
  env: Record<string, string> = {},
  opts: { dataDir?: string; databaseUrl?: string; log?: Logger } & AppOptions = {},
): Promise<TestApp> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'sightflow-test-'));
  const databaseUrl = opts.databaseUrl ?? (await freshDatabaseUrl());
  const adminToken = 'test-admin-token';
  const config = testConfig(dataDir, databaseUrl, env);
  const app = await startApp(config, opts.log ?? createLogger(config.logLevel), {
    videoProviders: opts.videoProviders,
  });
  let key = app.bootstrapKey;
  const [project] = await app.services.projects.list();
  if (!key) key = (await app.services.projects.createKey(project!.id, 'test')).key;
  const url = `http://127.0.0.1:${app.port}`;
  return {
    app,
    url,
    key,
    projectId: project!.id,
    adminToken,
    dataDir,
    databaseUrl,
    config,
    async close() {
      await app.stop();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * fetch with the project key unless headers say otherwise. Every response is checked against the OpenAPI
 * contract (./contract.ts) and a mismatch throws, failing the test; `unchecked: true` skips that for a test
 * that deliberately looks at something outside the contract.
 */
export async function api(
  t: TestApp,
  path: string,
  init: RequestInit & { json?: unknown; key?: string | null; unchecked?: boolean } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers = new Headers(init.headers);
  if (init.key !== null && !headers.has('authorization')) headers.set('authorization', `Bearer ${init.key ?? t.key}`);
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers.set('content-type', 'application/json');
  }
  const res = await fetch(t.url + path, { ...init, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!init.unchecked)
    checkResponse(
      t.app.server.router,
      (init.method ?? 'GET').toUpperCase(),
      path,
      res.status,
      res.headers.get('content-type'),
      text,
    );
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/**
 * Plain fetch of a path on the test server (binary bodies, no key), with the same contract check as api():
 * the body is read here, checked, and handed back in a fresh Response.
 */
export async function fetchChecked(t: TestApp, path: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(t.url + path, init);
  const buf = Buffer.from(await res.arrayBuffer());
  checkResponse(
    t.app.server.router,
    (init.method ?? 'GET').toUpperCase(),
    path,
    res.status,
    res.headers.get('content-type'),
    buf.toString('utf8'),
  );
  return new Response(res.status === 204 || res.status === 304 ? null : buf, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

export function admin(t: TestApp, path: string, init: RequestInit & { json?: unknown } = {}) {
  return api(t, path, {
    ...init,
    headers: { ...(init.headers as Record<string, string> | undefined), authorization: `Bearer ${t.adminToken}` },
  });
}
