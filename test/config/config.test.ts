// The configuration tree against the table of docs/configuration.md: the table lists exactly the variables the
// schema knows, every bad numeric, switch or enum value stops loadConfig with an error naming the variable,
// and the defaults the table shows as literals are the schema's. Keeps the documentation and the parser from
// drifting apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus } from 'node:os';
import { ConfigError, CONFIG_VARIABLES, defaultInferenceSessions, loadConfig } from '../../src/config/index.js';
import { projectRoot } from '../../src/base/paths.js';

// One variable per routing hint, read beside the schema's fixed names.
const PATTERN_ROWS = new Set(['SIGHTFLOW_PROVIDERS_<NAME>']);

function tableRows(): Map<string, string> {
  const page = readFileSync(join(projectRoot, 'docs', 'configuration.md'), 'utf8');
  const start = page.indexOf('\n## Variables and flags\n');
  assert.ok(start >= 0, 'docs/configuration.md has no "## Variables and flags" section');
  const end = page.indexOf('\n## ', start + 1);
  const body = page.slice(start, end < 0 ? undefined : end);
  const rows = new Map<string, string>();
  for (const line of body.split('\n')) {
    const m = /^\| `([A-Z0-9_<>]+)` \|[^|]*\| ([^|]*) \|/.exec(line);
    if (m) rows.set(m[1]!, m[2]!.trim());
  }
  return rows;
}

const names = Object.keys(CONFIG_VARIABLES);

test('docs/configuration.md lists every variable of the schema, and nothing else', () => {
  const rows = tableRows();
  assert.ok(rows.size > 30, `parsed ${rows.size} rows`);
  const documented = [...rows.keys()].filter((n) => !PATTERN_ROWS.has(n)).sort();
  assert.deepEqual(documented, [...names].sort());
});

test('a bad value of a numeric, switch or enum variable stops loading with its name', () => {
  const checked: string[] = [];
  for (const [name, f] of Object.entries(CONFIG_VARIABLES)) {
    if (f.kind === 'string') continue;
    checked.push(name);
    for (const bad of ['abc', '-5', ...(f.kind === 'int' ? ['1.5'] : [])]) {
      if (f.kind === 'number' && bad === '-5') continue;
      assert.throws(
        () => loadConfig({ [name]: bad }),
        (e: unknown) => {
          assert.ok(e instanceof ConfigError, String(e));
          assert.equal(e.variable, name);
          assert.match(
            e.message,
            new RegExp(`^invalid configuration: ${name} must be .* \\(got "${bad.replace('.', '\\.')}"\\)`),
          );
          return true;
        },
        `${name}=${bad}`,
      );
    }
  }
  assert.throws(() => loadConfig({ SIGHTFLOW_RATE_LIMIT_RPS: '-1' }), /SIGHTFLOW_RATE_LIMIT_RPS must be a number >= 0/);
  assert.throws(
    () => loadConfig({ SIGHTFLOW_PORT: '70000' }),
    /SIGHTFLOW_PORT must be an integer from 0 to 65535 \(got "70000"\)/,
  );
  assert.ok(checked.length >= 25, `checked ${checked.length}`);
});

test('switches accept true/false/1/0 (any case) and blank means the default', () => {
  const switches = Object.entries(CONFIG_VARIABLES)
    .filter(([, f]) => f.kind === 'bool')
    .map(([n]) => n);
  assert.ok(switches.includes('SIGHTFLOW_VLM_STREAM') && switches.includes('SIGHTFLOW_VECTORS_OCR'));
  for (const [v, want] of [
    ['true', true],
    ['1', true],
    ['TRUE', true],
    ['false', false],
    ['0', false],
  ] as const) {
    const c = loadConfig({ SIGHTFLOW_VECTORS_OCR: v, SIGHTFLOW_ALLOW_PRIVATE_URLS: v, SIGHTFLOW_NO_WORKER: v });
    assert.equal(c.vectors.ocr, want, v);
    assert.equal(c.allowPrivateUrls, want, v);
    assert.equal(c.inProcessWorker, !want, v);
  }
  assert.equal(loadConfig({ SIGHTFLOW_PORT: '', SIGHTFLOW_VIDEO_LEASE_MS: ' ' }).port, 8080);
  assert.throws(
    () => loadConfig({ SIGHTFLOW_VLM_FALLBACK: 'yes' }),
    /SIGHTFLOW_VLM_FALLBACK must be one of true, false, 1, 0 \(got "yes"\)/,
  );
});

test('defaults equal the table where it shows a literal', () => {
  const rows = tableRows();
  let compared = 0;
  for (const [name, f] of Object.entries(CONFIG_VARIABLES)) {
    const shown = rows.get(name);
    if (shown === undefined || f.default === undefined) continue;
    const literal = shown.replace(/ \(.*\)$/, '');
    if (f.kind === 'int' || f.kind === 'number') {
      if (!/^\d+$/.test(literal)) continue;
      assert.equal(f.default, Number(literal), name);
    } else if (f.kind === 'bool') {
      assert.equal(String(f.default), literal, name);
    } else {
      if (literal.startsWith('(')) continue;
      assert.equal(f.default, literal, name);
    }
    compared++;
  }
  assert.ok(compared >= 30, `compared ${compared}`);
});

test('the tree: derived defaults, flags over variables, frozen, one line for several bad variables', () => {
  const c = loadConfig(
    { SIGHTFLOW_VIDEO_LEASE_MS: '900', SIGHTFLOW_PORT: '9000' },
    { port: 0, dataDir: '/tmp/sf-config-test' },
  );
  assert.equal(c.port, 0);
  assert.equal(c.modelsDir, '/tmp/sf-config-test/models');
  assert.deepEqual(c.video, {
    leaseMs: 900,
    heartbeatMs: 300,
    pollMs: 1000,
    reaperMs: 900,
    checkpointChunks: 8,
    checkpointMs: 250,
    sseHeartbeatMs: 15000,
    appendGatherMs: 50,
    streamPollMs: 2000,
    streamBufferBytes: 4194304,
    streamStallMs: 30000,
    webhookPollMs: 1000,
    webhookRetryMs: 5000,
    hwaccel: 'none',
  });
  assert.deepEqual(c.providers.default, [{ type: 'local' }]);
  assert.equal(c.vlm, null);
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.video) && Object.isFrozen(c.providers.default));
  assert.throws(() => loadConfig({ SIGHTFLOW_VIDEO_LEASE_MS: 'abc' }), {
    message: 'invalid configuration: SIGHTFLOW_VIDEO_LEASE_MS must be an integer >= 200 (got "abc")',
  });
  assert.throws(
    () => loadConfig({ SIGHTFLOW_PORT: 'x', SIGHTFLOW_MCP_KEEPALIVE_MS: 'y' }),
    (e: Error) =>
      !e.message.includes('\n') &&
      /SIGHTFLOW_PORT must be/.test(e.message) &&
      /SIGHTFLOW_MCP_KEEPALIVE_MS must be/.test(e.message),
  );
  assert.throws(
    () => loadConfig({ SIGHTFLOW_VLM_URL: 'not a url', SIGHTFLOW_VLM_MODEL: 'm' }),
    /SIGHTFLOW_VLM_URL must be an http\(s\) URL/,
  );
});

test('sessions per model: one per core below 4 cores, half the cores up to 8 above, the variable over both', () => {
  assert.deepEqual([1, 2, 3, 4, 6, 16, 64].map(defaultInferenceSessions), [1, 2, 3, 2, 3, 8, 8]);
  assert.equal(loadConfig({}).inference.sessions, defaultInferenceSessions(cpus().length));
  assert.equal(loadConfig({ SIGHTFLOW_INFERENCE_SESSIONS: '3' }).inference.sessions, 3);
  assert.throws(
    () => loadConfig({ SIGHTFLOW_INFERENCE_SESSIONS: '0' }),
    /SIGHTFLOW_INFERENCE_SESSIONS must be an integer >= 1/,
  );
});

test('OTLP span export: off unless an endpoint is set; /v1/traces appended to the base endpoint, the traces endpoint as it is', () => {
  assert.equal(loadConfig({}).otlp, null);
  assert.deepEqual(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).otlp, {
    url: 'http://127.0.0.1:4318/v1/traces',
    headers: {},
    serviceName: 'sightflow',
    scheduleDelayMs: 5000,
  });
  assert.equal(
    loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/otel/' }).otlp!.url,
    'http://127.0.0.1:4318/otel/v1/traces',
  );
  assert.equal(
    loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://127.0.0.1:9443/ingest',
    }).otlp!.url,
    'https://127.0.0.1:9443/ingest',
  );
  const c = loadConfig({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces',
    OTEL_SERVICE_NAME: 'edge-1',
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%2Cb%3Dc, x-tenant = one ',
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=two',
  }).otlp!;
  assert.deepEqual(c, {
    url: 'http://127.0.0.1:4318/v1/traces',
    headers: { 'api-key': 'a,b=c', 'x-tenant': 'two' },
    serviceName: 'edge-1',
    scheduleDelayMs: 200,
  });

  for (const [name, bad] of [
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'not a url'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'ftp://127.0.0.1/'],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', '127.0.0.1:4318'],
  ]) {
    assert.throws(
      () => loadConfig({ [name!]: bad }),
      (e: unknown) => e instanceof ConfigError && e.variable === name && /must be an http\(s\) URL/.test(e.message),
      bad,
    );
  }
  // A header's value is often a credential: the error says which entry, never what it holds.
  for (const bad of ['api-key', 'api-key=secret%zz', '=secret', 'bad name=secret']) {
    assert.throws(
      () =>
        loadConfig({
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
          OTEL_EXPORTER_OTLP_HEADERS: `x-ok=1,${bad}`,
        }),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.variable === 'OTEL_EXPORTER_OTLP_HEADERS' &&
        /entry 2 is not/.test(e.message) &&
        !e.message.includes('secret'),
      bad,
    );
  }
});
