// House rules as tests: cheap static checks over src/ that keep the tree's shape (where SQL, the addon,
// ApiError, environment reads and the OpenTelemetry packages live; which parts may import which; no import
// circles). Each rule is a plain function over {path, text} files so it can be run on a planted example too,
// proving it can fail.
// Paths are relative to src/ with forward slashes. Comments are stripped before checking, so prose that
// mentions a forbidden thing does not trip a rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, posix } from 'node:path';
import { projectRoot } from '../../src/base/paths.js';

export interface SourceFile {
  path: string;
  text: string;
}

const srcRoot = join(projectRoot, 'src');

function loadTree(): SourceFile[] {
  return readdirSync(srcRoot, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts'))
    .map((d) => join(d.parentPath, d.name))
    .map((p) => ({ path: relative(srcRoot, p).split('\\').join('/'), text: readFileSync(p, 'utf8') }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

/** Block comments and whole-line // comments removed (trailing ones stay: cutting at // would break URLs). */
export function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^[ \t]*\/\/.*$/gm, '');
}

const tree = loadTree();

// ---------------------------------------------------------------------------------------------------------
// 1. SQL lives only in *.sql.ts files, so every query can be read (and reviewed) in one place per part.

/** A string or template literal that opens with an SQL statement. This tree writes SQL keywords in
 * capitals, which keeps English messages ("Select a model from ...") from matching. */
const SQL_START = new RegExp(
  String.raw`['"\x60]\s*(?:` +
    [
      String.raw`SELECT\s[\s\S]{0,300}?\bFROM\s`,
      String.raw`INSERT\s+INTO\s`,
      String.raw`UPDATE\s+\S+\s+SET\s`,
      String.raw`DELETE\s+FROM\s`,
      String.raw`CREATE\s+(?:TABLE|(?:UNIQUE\s+)?INDEX|EXTENSION|SCHEMA|TYPE|OR\s+REPLACE)\s`,
      String.raw`ALTER\s+TABLE\s`,
      String.raw`DROP\s+(?:TABLE|INDEX|SCHEMA|TYPE)\s`,
      String.raw`WITH\s+\w+\s+AS\s*\(`,
      String.raw`(?:BEGIN|COMMIT|ROLLBACK)\s*['"\x60;]`,
    ].join('|') +
    ')',
);

/** Files outside *.sql.ts allowed to hold SQL, with the reason. */
export const SQL_OUTSIDE_SQL_FILES: Record<string, string> = {
  'store/db.ts': 'the database adapter itself: BEGIN/COMMIT/ROLLBACK around transactions and a SELECT 1 probe',
};

export function sqlOutsideSqlFiles(
  files: SourceFile[],
  allowed: Record<string, string> = SQL_OUTSIDE_SQL_FILES,
): string[] {
  return files
    .filter((f) => !f.path.endsWith('.sql.ts') && !(f.path in allowed))
    .filter((f) => SQL_START.test(stripComments(f.text)))
    .map((f) => `${f.path}: SQL outside a .sql.ts file: ${stripComments(f.text).match(SQL_START)![0].slice(0, 60)}`);
}

test('rule 1: no SQL outside *.sql.ts in src/', () => {
  assert.deepEqual(sqlOutsideSqlFiles(tree), []);
  const planted = [
    { path: 'video/bad.ts', text: 'await q.query(`SELECT id, status\n  FROM video_tasks WHERE id = $1`, [id]);' },
    { path: 'auth/bad.ts', text: "await q.query('INSERT INTO projects (id) VALUES ($1)', [id]);" },
    { path: 'video/tasks.sql.ts', text: 'export const sql = { get: `SELECT * FROM video_tasks` };' },
    { path: 'vision/fine.ts', text: "throw new Error('Select a model from the list');" },
    { path: 'store/db.ts', text: "await client.query('BEGIN');" },
    { path: 'store/other.ts', text: "await client.query('ROLLBACK');" },
  ];
  assert.deepEqual(
    sqlOutsideSqlFiles(planted).map((v) => v.split(':')[0]),
    ['video/bad.ts', 'auth/bad.ts', 'store/other.ts'],
  );
});

// ---------------------------------------------------------------------------------------------------------
// 2. The native addon is loaded only under src/native/, which wraps each of its calls with checked options
//    and coded errors; nothing else may reach it directly.

export function addonOutsideNative(files: SourceFile[]): string[] {
  return files
    .filter((f) => !f.path.startsWith('native/'))
    .filter((f) => /\bloadAddon\b|sightflow\.node|build\/Release/.test(stripComments(f.text)))
    .map((f) => `${f.path}: loads the native addon outside src/native/`);
}

test('rule 2: the addon is loaded only in src/native/', () => {
  assert.deepEqual(addonOutsideNative(tree), []);
  const planted = [
    { path: 'video/bad.ts', text: "import { loadAddon } from '../native/load.js';\nconst a = loadAddon();" },
    { path: 'vision/bad.ts', text: "const a = require('../../build/Release/sightflow.node');" },
    { path: 'native/fine.ts', text: 'const a = loadAddon();' },
  ];
  assert.deepEqual(
    addonOutsideNative(planted).map((v) => v.split(':')[0]),
    ['video/bad.ts', 'vision/bad.ts'],
  );
});

// ---------------------------------------------------------------------------------------------------------
// 3. Errors reach clients only as catalogued ApiErrors: `new ApiError(` is written in errors.ts alone.

export function apiErrorOutsideCatalogue(files: SourceFile[]): string[] {
  return files
    .filter((f) => f.path !== 'base/errors.ts')
    .filter((f) => /\bnew\s+ApiError\s*\(/.test(stripComments(f.text)))
    .map((f) => `${f.path}: new ApiError( outside src/base/errors.ts`);
}

test('rule 3: no new ApiError( outside src/base/errors.ts', () => {
  assert.deepEqual(apiErrorOutsideCatalogue(tree), []);
  const planted = [
    { path: 'video/bad.ts', text: "throw new ApiError(400, 'invalid_request_error', 'oops', 'm');" },
    { path: 'base/errors.ts', text: "return new ApiError(400, 'invalid_request_error', code, m);" },
    { path: 'vision/fine.ts', text: '// never write new ApiError( here\nthrow errors.internal();' },
  ];
  assert.deepEqual(
    apiErrorOutsideCatalogue(planted).map((v) => v.split(':')[0]),
    ['video/bad.ts'],
  );
});

// ---------------------------------------------------------------------------------------------------------
// 4. Environment variables are read only under src/config/, so every setting is parsed, checked and
//    documented in one tree. The files below still read process.env on their own today. This list must
//    only shrink: a file that stops reading process.env must leave it (the test fails on stale entries),
//    and it is emptied once the settings have moved into src/config/.

export const ENV_READERS_TODAY: readonly string[] = [];

export function envReadsOutsideConfig(
  files: SourceFile[],
  allowed: readonly string[],
): { violations: string[]; stale: string[] } {
  const readers = files
    .filter((f) => !f.path.startsWith('config/') && /\bprocess\.env\b/.test(stripComments(f.text)))
    .map((f) => f.path);
  return {
    violations: readers.filter((p) => !allowed.includes(p)).map((p) => `${p}: reads process.env outside src/config/`),
    stale: allowed.filter((p) => !readers.includes(p)),
  };
}

test("rule 4: no process.env outside src/config/ (beyond the shrinking list of today's readers)", () => {
  const { violations, stale } = envReadsOutsideConfig(tree, ENV_READERS_TODAY);
  assert.deepEqual(violations, [], 'read the setting through src/config/ instead');
  assert.deepEqual(stale, [], 'these files no longer read process.env: remove them from ENV_READERS_TODAY');
  const planted = [
    { path: 'video/new-thing.ts', text: 'const n = Number(process.env.SIGHTFLOW_NEW ?? 1);' },
    { path: 'config/video.ts', text: 'const n = process.env.SIGHTFLOW_VIDEO;' },
    { path: 'main.ts', text: 'const x = process.env.X;' },
    { path: 'vision/old.ts', text: 'export const x = 1;' },
  ];
  assert.deepEqual(envReadsOutsideConfig(planted, ['main.ts', 'vision/old.ts']), {
    violations: ['video/new-thing.ts: reads process.env outside src/config/'],
    stale: ['vision/old.ts'],
  });
});

// ---------------------------------------------------------------------------------------------------------
// The import graph (relative imports between src/ files), shared by rules 5 and 6.

export interface ImportEdge {
  from: string;
  to: string;
  /** 'runtime': a static import that runs the target first; 'type': erased at compile time;
   * 'dynamic': import() at call time, which cannot close a load-order circle. */
  kind: 'runtime' | 'type' | 'dynamic';
}

export function importEdges(files: SourceFile[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const target = (from: string, spec: string) =>
    posix.normalize(posix.join(posix.dirname(from), spec)).replace(/\.js$/, '.ts');
  for (const f of files) {
    const text = stripComments(f.text);
    for (const m of text.matchAll(/^[ \t]*(?:import|export)\s+(type\s+)?([^;'"]*?)\s*from\s*['"]([^'"]+)['"]/gm)) {
      if (!m[3]!.startsWith('.')) continue;
      const clause = m[2]!.trim();
      const allTypes =
        /^\{[^}]*\}$/.test(clause) &&
        clause
          .slice(1, -1)
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .every((s) => s.startsWith('type '));
      edges.push({ from: f.path, to: target(f.path, m[3]!), kind: m[1] || allTypes ? 'type' : 'runtime' });
    }
    for (const m of text.matchAll(/^[ \t]*import\s+['"](\.[^'"]+)['"]/gm))
      edges.push({ from: f.path, to: target(f.path, m[1]!), kind: 'runtime' });
    for (const m of text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g))
      edges.push({ from: f.path, to: target(f.path, m[1]!), kind: 'dynamic' });
  }
  return edges;
}

const edges = importEdges(tree);

test("the import graph reader sees the src/ tree's imports", () => {
  const paths = new Set(tree.map((f) => f.path));
  assert.ok(edges.length > 300, `only ${edges.length} imports found`);
  const unresolved = edges.filter((e) => !paths.has(e.to)).map((e) => `${e.from} -> ${e.to}`);
  assert.deepEqual(unresolved, [], 'imports that resolve to no src/ file (the reader misparsed them)');
  assert.deepEqual(
    importEdges([
      {
        path: 'video/a.ts',
        text: "import type { X } from '../vision/b.js';\nimport {\n  type Y,\n  z,\n} from './c.js';\nexport { w } from '../errors.js';\nconst m = await import('./d.js');",
      },
    ]),
    [
      { from: 'video/a.ts', to: 'vision/b.ts', kind: 'type' },
      { from: 'video/a.ts', to: 'video/c.ts', kind: 'runtime' },
      { from: 'video/a.ts', to: 'errors.ts', kind: 'runtime' },
      { from: 'video/a.ts', to: 'video/d.ts', kind: 'dynamic' },
    ],
  );
});

// ---------------------------------------------------------------------------------------------------------
// 5. Layering. src/ is built in floors, lowest first; each top-level file or folder of src/ is one part on one
//    floor. A file may import its own part and any part on a lower floor; below the features a part may also
//    import a sibling on its own floor (rule 6 keeps those free of circles). Feature parts serve one API each
//    and import no other feature. app.ts, main.ts and front.ts compose everything and may import anything. Type-only
//    imports count too: they couple the parts just the same. A part missing from the table fails, so a new
//    folder is placed on purpose. Exceptions would be listed with their reason; there are none.

export const FLOORS: ReadonlyArray<{ floor: string; parts: readonly string[] }> = [
  // What every part builds on: base/ (the error catalogue, logging, ids, paths, process tuning and shutdown), the
  // addon's faces, media input, the database and blob store, keys and usage, the HTTP framework, metrics and
  // trace context.
  { floor: 'base', parts: ['base', 'native', 'media', 'store', 'auth', 'usage', 'http', 'metrics', 'tracing'] },
  // The model runtime and the task engines on it, with the one object that hands them to the parts.
  { floor: 'engines', parts: ['inference', 'detection', 'ocr', 'task-models'] },
  // Settings parsed into the options the engines and parts take.
  { floor: 'config', parts: ['config'] },
  // One home for models: catalogue (GET /v1/models), lifecycle, import, the CLI, the admin routes, the shared store.
  { floor: 'models', parts: ['models'] },
  // What a feature is handed (the services object), what it hands back (the Module contract), and the ports one
  // feature offers another without importing it: the collections port and the moment metadata (the vectors part
  // implements and reads them, the video index step writes through them).
  { floor: 'services', parts: ['services'] },
  { floor: 'features', parts: ['system', 'vision', 'video', 'vectors', 'mcp', 'console', 'projects', 'files'] },
];
// front.ts composes a front process (HTTP, keys and the vision routes over the pipe to `serve`) as app.ts does serve;
// migrated-db.ts composes every part's migrations for the CLI's database commands.
const COMPOSITION_ROOT = new Set(['app.ts', 'main.ts', 'front.ts', 'migrated-db.ts']);
const FEATURE_FLOOR = FLOORS.length - 1;

export const CROSS_IMPORTS_TODAY: Record<string, string> = {};

/** A src/ path's part (its top-level file or folder) and that part's floor index (-1: not in FLOORS). */
export function placeOf(path: string): { part: string; floor: number } {
  const part = path.split('/')[0]!;
  return { part, floor: FLOORS.findIndex((f) => f.parts.includes(part)) };
}

export function layeringViolations(
  es: ImportEdge[],
  allowed: Record<string, string>,
): { violations: string[]; stale: string[] } {
  const crossing = new Map<string, string>();
  for (const e of es) {
    if (COMPOSITION_ROOT.has(e.from)) continue;
    const from = placeOf(e.from);
    const to = COMPOSITION_ROOT.has(e.to) ? { part: e.to, floor: FLOORS.length } : placeOf(e.to);
    if (from.part === to.part) continue;
    const key = `${e.from} -> ${e.to}`;
    if (from.floor < 0) crossing.set(key, `${from.part} is on no floor (place it in FLOORS)`);
    else if (to.floor < 0) crossing.set(key, `${to.part} is on no floor (place it in FLOORS)`);
    else if (to.floor > from.floor)
      crossing.set(
        key,
        `the ${FLOORS[from.floor]!.floor} floor imports the ${FLOORS[to.floor]?.floor ?? 'composition root'} floor above it`,
      );
    else if (to.floor === FEATURE_FLOOR && from.floor === FEATURE_FLOOR)
      crossing.set(key, `the ${from.part} feature imports the ${to.part} feature`);
  }
  return {
    violations: [...crossing].filter(([k]) => !(k in allowed)).map(([k, why]) => `${k}: ${why}`),
    stale: Object.keys(allowed).filter((k) => !crossing.has(k)),
  };
}

test('rule 5: every part on its floor, no import up a floor nor from one feature into another', () => {
  const { violations, stale } = layeringViolations(edges, CROSS_IMPORTS_TODAY);
  assert.deepEqual(violations, [], 'move the shared code down a floor (or list the import with its reason)');
  assert.deepEqual(stale, [], 'these imports are gone: remove them from CROSS_IMPORTS_TODAY');
  const unplaced = [
    ...new Set(tree.map((f) => f.path).filter((p) => !COMPOSITION_ROOT.has(p) && placeOf(p).floor < 0)),
  ];
  assert.deepEqual(unplaced, [], 'place these parts in FLOORS');
  const planted: ImportEdge[] = [
    { from: 'mcp/tools.ts', to: 'video/worker.ts', kind: 'runtime' },
    { from: 'store/db.ts', to: 'vectors/index.ts', kind: 'type' },
    { from: 'detection/detect.ts', to: 'models/model-catalogue.ts', kind: 'type' },
    { from: 'video/pipeline/frame-pipeline.ts', to: 'vision/vision.service.ts', kind: 'type' },
    { from: 'http/server.ts', to: 'app.ts', kind: 'runtime' },
    { from: 'newpart/a.ts', to: 'errors.ts', kind: 'runtime' },
    { from: 'video/a.ts', to: 'video/b.ts', kind: 'runtime' },
    { from: 'video/a.ts', to: 'media/fetch.ts', kind: 'runtime' },
    { from: 'video/pipeline/frame-pipeline.ts', to: 'detection/detect.ts', kind: 'type' },
    { from: 'ocr/engine.ts', to: 'inference/runtime.ts', kind: 'runtime' },
    { from: 'http/route.ts', to: 'usage/billing.ts', kind: 'type' },
    { from: 'app.ts', to: 'vision/vision.module.ts', kind: 'runtime' },
    { from: 'vectors/x.ts', to: 'vision/y.ts', kind: 'type' },
  ];
  assert.deepEqual(
    layeringViolations(planted, { 'vectors/x.ts -> vision/y.ts': 'r', 'video/gone.ts -> vision/z.ts': 'r' }),
    {
      violations: [
        'mcp/tools.ts -> video/worker.ts: the mcp feature imports the video feature',
        'store/db.ts -> vectors/index.ts: the base floor imports the features floor above it',
        'detection/detect.ts -> models/model-catalogue.ts: the engines floor imports the models floor above it',
        'video/pipeline/frame-pipeline.ts -> vision/vision.service.ts: the video feature imports the vision feature',
        'http/server.ts -> app.ts: the base floor imports the composition root floor above it',
        'newpart/a.ts -> errors.ts: newpart is on no floor (place it in FLOORS)',
      ],
      stale: ['video/gone.ts -> vision/z.ts'],
    },
  );
});

// ---------------------------------------------------------------------------------------------------------
// 6. No import circles: a circle of static imports makes load order (and so which side sees the other's
//    exports as undefined) depend on which file happens to be imported first. Type-only imports are erased
//    and import() runs after loading, so only static runtime imports can close one. Today's circles are
//    listed with their reason; each is reported by its files in sorted order. There are none.

export const CIRCLES_TODAY: Record<string, string> = {};

/** The strongly connected components of more than one file (or a file importing itself), each sorted. */
export function importCircles(es: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of es) if (e.kind === 'runtime') next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (next.get(v) ?? []).includes(v)) circles.push(scc.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return circles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

test('rule 6: no import circles among src/ modules', () => {
  const circles = importCircles(edges).map((c) => c.join(' <-> '));
  for (const c of circles)
    console.log(`import circle: ${c}${c in CIRCLES_TODAY ? ` (listed: ${CIRCLES_TODAY[c]})` : ''}`);
  assert.deepEqual(
    circles.filter((c) => !(c in CIRCLES_TODAY)),
    [],
    'break the circle (or list it with its reason)',
  );
  assert.deepEqual(
    Object.keys(CIRCLES_TODAY).filter((c) => !circles.includes(c)),
    [],
    'these circles are gone: remove them from CIRCLES_TODAY',
  );
  const planted: ImportEdge[] = [
    { from: 'store/migrations.sql.ts', to: 'video/video.migrations.sql.ts', kind: 'runtime' },
    { from: 'video/video.migrations.sql.ts', to: 'store/migrations.sql.ts', kind: 'runtime' },
    { from: 'a.ts', to: 'b.ts', kind: 'runtime' },
    { from: 'b.ts', to: 'a.ts', kind: 'type' },
    { from: 'c.ts', to: 'd.ts', kind: 'runtime' },
    { from: 'd.ts', to: 'c.ts', kind: 'dynamic' },
  ];
  assert.deepEqual(importCircles(planted), [['store/migrations.sql.ts', 'video/video.migrations.sql.ts']]);
});

// ---------------------------------------------------------------------------------------------------------
// 7. The OpenTelemetry packages are loaded only when spans are exported: tracing/otlp.ts imports them with
//    import() when an OTLP endpoint is configured, and no other file names them. A server without an endpoint
//    never loads them, and its request path is the same as before span export existed.

export const OTEL_LOADER = 'tracing/otlp.ts';

export function openTelemetryImports(files: SourceFile[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    const text = stripComments(f.text);
    if (f.path !== OTEL_LOADER) {
      if (/['"\x60]@opentelemetry\//.test(text))
        out.push(`${f.path}: names an @opentelemetry package outside ${OTEL_LOADER}`);
      continue;
    }
    for (const m of text.matchAll(
      /^[ \t]*(?:import|export)\s+(type\s+)?[^;'"]*?\bfrom\s*['"](@opentelemetry\/[^'"]+)['"]/gm,
    )) {
      if (!m[1]) out.push(`${f.path}: imports ${m[2]} statically (only import() and import type)`);
    }
    for (const m of text.matchAll(/^[ \t]*import\s+['"](@opentelemetry\/[^'"]+)['"]/gm))
      out.push(`${f.path}: imports ${m[1]} statically (only import() and import type)`);
  }
  return out;
}

test('rule 7: the OpenTelemetry packages are loaded only by import() in tracing/otlp.ts', () => {
  assert.deepEqual(openTelemetryImports(tree), []);
  const loader = tree.find((f) => f.path === OTEL_LOADER);
  assert.ok(
    loader && /\bimport\(\s*'@opentelemetry\/exporter-trace-otlp-http'\s*\)/.test(loader.text),
    `${OTEL_LOADER} loads the exporter with import()`,
  );
  const planted = [
    { path: 'http/exchange.ts', text: "import { trace } from '@opentelemetry/api';" },
    { path: 'app.ts', text: "const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');" },
    {
      path: 'tracing/otlp.ts',
      text: "import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';\nimport '@opentelemetry/api';",
    },
    { path: 'tracing/spans.ts', text: "// loaded by otlp.ts from '@opentelemetry/api'\nexport let spansOn = false;" },
    {
      path: 'tracing/otlp.ts',
      text: "import type { SpanExporter } from '@opentelemetry/sdk-trace-base';\nconst api = await import('@opentelemetry/api');",
    },
  ];
  assert.deepEqual(openTelemetryImports(planted), [
    'http/exchange.ts: names an @opentelemetry package outside tracing/otlp.ts',
    'app.ts: names an @opentelemetry package outside tracing/otlp.ts',
    'tracing/otlp.ts: imports @opentelemetry/sdk-trace-base statically (only import() and import type)',
    'tracing/otlp.ts: imports @opentelemetry/api statically (only import() and import type)',
  ]);
});

// ---------------------------------------------------------------------------------------------------------
// 8. The video part's rooms (CONTRIBUTING.md, "The video part's rooms"). Inside src/video/ each top-level file or
//    folder is one room on one floor, lowest first; a room imports its own files and rooms on lower floors
//    only, never a room on its own floor (analytics/ and moments/ are separate rich steps; tasks/ and worker/
//    meet only through the contract). The files of a floor marked `together` (the contract at the root, the
//    shell) are one room. A new room fails until it is placed here.

export const VIDEO_ROOMS: ReadonlyArray<{ floor: string; rooms: readonly string[]; together?: boolean }> = [
  // The task contract every room imports: states and limits, the job, the chunk's fields, the provider
  // interface, and the task table's statements.
  { floor: 'contract', rooms: ['task-contract.ts', 'tasks.sql.ts'], together: true },
  // Opening and decoding a video; the archive of each task's stream and its delivery.
  { floor: 'media', rooms: ['source', 'stream'] },
  // What a step is (frame side, worker side, the descriptor) and the steps that need no room of their own.
  { floor: 'step contract', rooms: ['pipeline'] },
  // Rich steps: their own tables, routes, services and step descriptor.
  { floor: 'rich steps', rooms: ['analytics', 'moments'] },
  // What delivers the rich steps' findings elsewhere (MQTT).
  { floor: 'delivery', rooms: ['mqtt'] },
  // The step list, checking and planning a request's steps, the frame pipeline and the worker hooks' runner.
  { floor: 'steps', rooms: ['steps'] },
  // The request and answer shapes of /v1/video/*, from the contract and the step list.
  { floor: 'api shapes', rooms: ['schemas.ts'] },
  // The task machinery: the API side (store, use cases, webhooks, reaper) and the worker (queue, providers).
  { floor: 'tasks', rooms: ['tasks', 'worker'] },
  // The shell: the module, its routes, its tables and its gauges.
  {
    floor: 'shell',
    rooms: [
      'video.module.ts',
      'video.routes.ts',
      'video.migrations.sql.ts',
      'video-metrics.ts',
      'video-metrics.sql.ts',
    ],
    together: true,
  },
];

/** A src/video/ path's room and that room's floor (-1: not in VIDEO_ROOMS); null outside src/video/. */
export function roomOf(path: string): { room: string; floor: number } | null {
  const parts = path.split('/');
  if (parts[0] !== 'video' || parts.length < 2) return null;
  const floor = VIDEO_ROOMS.findIndex((f) => f.rooms.includes(parts[1]!));
  return { room: floor >= 0 && VIDEO_ROOMS[floor]!.together ? VIDEO_ROOMS[floor]!.floor : parts[1]!, floor };
}

export function roomViolations(es: ImportEdge[]): string[] {
  const out = new Set<string>();
  for (const e of es) {
    const from = roomOf(e.from);
    const to = roomOf(e.to);
    if (!from || !to || from.room === to.room) continue;
    const key = `${e.from} -> ${e.to}`;
    if (from.floor < 0) out.add(`${key}: video/${from.room} is in no video room (place it in VIDEO_ROOMS)`);
    else if (to.floor < 0) out.add(`${key}: video/${to.room} is in no video room (place it in VIDEO_ROOMS)`);
    else if (to.floor > from.floor)
      out.add(
        `${key}: the ${VIDEO_ROOMS[from.floor]!.floor} floor imports the ${VIDEO_ROOMS[to.floor]!.floor} floor above it`,
      );
    else if (to.floor === from.floor) out.add(`${key}: video/${from.room} imports video/${to.room} on its own floor`);
  }
  return [...out];
}

test('rule 8: every video room on its floor; a room imports only the rooms below it', () => {
  assert.deepEqual(
    roomViolations(edges),
    [],
    'move the shared piece down (to the contract, or a port handed over in app.ts)',
  );
  const unplaced = [
    ...new Set(
      tree
        .map((f) => roomOf(f.path))
        .filter((r) => r && r.floor < 0)
        .map((r) => r!.room),
    ),
  ];
  assert.deepEqual(unplaced, [], 'place these video rooms in VIDEO_ROOMS');
  const planted: ImportEdge[] = [
    { from: 'video/analytics/analytics.service.ts', to: 'video/steps/plan.ts', kind: 'runtime' },
    { from: 'video/analytics/step.ts', to: 'video/moments/step.ts', kind: 'type' },
    { from: 'video/stream/stream.ts', to: 'video/tasks/task-store.ts', kind: 'type' },
    { from: 'video/worker/queue.ts', to: 'video/tasks/task-store.ts', kind: 'type' },
    { from: 'video/faces/step.ts', to: 'video/pipeline/step.ts', kind: 'runtime' },
    { from: 'video/tasks/tasks.service.ts', to: 'video/steps/plan.ts', kind: 'runtime' },
    { from: 'video/pipeline/detect/step.ts', to: 'video/pipeline/step.ts', kind: 'runtime' },
    { from: 'video/steps/plan.ts', to: 'video/task-contract.ts', kind: 'type' },
    { from: 'video/video.module.ts', to: 'video/video.routes.ts', kind: 'runtime' },
    { from: 'vision/a.ts', to: 'video/b.ts', kind: 'runtime' },
  ];
  assert.deepEqual(roomViolations(planted), [
    'video/analytics/analytics.service.ts -> video/steps/plan.ts: the rich steps floor imports the steps floor above it',
    'video/analytics/step.ts -> video/moments/step.ts: video/analytics imports video/moments on its own floor',
    'video/stream/stream.ts -> video/tasks/task-store.ts: the media floor imports the tasks floor above it',
    'video/worker/queue.ts -> video/tasks/task-store.ts: video/worker imports video/tasks on its own floor',
    'video/faces/step.ts -> video/pipeline/step.ts: video/faces is in no video room (place it in VIDEO_ROOMS)',
  ]);
});

// ---------------------------------------------------------------------------------------------------------
// 9. The services object is read-only once built (app.ts freezes it): what one part hands another (the vectors
//    part's collections, the route table) is wired in app.ts and handed to the parts that use it, so the order
//    parts are built in is no hidden contract. No file assigns a field of it.

/** The fields of the Services interface, read from services.ts. */
export function servicesFields(servicesTs: string): string[] {
  const body = /export interface Services \{([\s\S]*?)\n\}/.exec(stripComments(servicesTs))?.[1] ?? '';
  return [...body.matchAll(/^\s*(?:readonly\s+)?(\w+)\??\s*[:(]/gm)].map((m) => m[1]!);
}

export function servicesWrites(files: SourceFile[], fields: readonly string[]): string[] {
  const re = new RegExp(
    String.raw`\b(?:s|services|this\.s|this\.services|app\.services)\.(${fields.join('|')})\s*(?:=|\?\?=|\|\|=)(?!=)`,
    'g',
  );
  const out: string[] = [];
  for (const f of files)
    for (const m of stripComments(f.text).matchAll(re)) out.push(`${f.path}: assigns services.${m[1]}`);
  return out;
}

test('rule 9: nothing assigns a field of the services object (it is frozen once built)', () => {
  const servicesTs = tree.find((f) => f.path === 'services/services.ts')!.text;
  const fields = servicesFields(servicesTs);
  assert.ok(
    fields.includes('db') && fields.includes('taskModels') && !fields.includes('collections'),
    `fields read: ${fields.join(', ')}`,
  );
  assert.deepEqual(servicesWrites(tree, fields), []);
  assert.match(
    tree.find((f) => f.path === 'app.ts')!.text,
    /return Object\.freeze\(\{/,
    'openServices freezes what it builds',
  );
  const planted = [
    {
      path: 'vectors/vectors.module.ts',
      text: 's.collections = collectionsPort(s, store);\nconst n = s.db === other;',
    },
    { path: 'app.ts', text: '  services.router = server.router;\n  // services.log = x;' },
    { path: 'video/x.ts', text: 'this.s.readiness ??= new Map();\nsummary.first_frame = 1;' },
  ];
  assert.deepEqual(servicesWrites(planted, [...fields, 'collections', 'router']), [
    'vectors/vectors.module.ts: assigns services.collections',
    'app.ts: assigns services.router',
    'video/x.ts: assigns services.readiness',
  ]);
});

// ---------------------------------------------------------------------------------------------------------
// 10. Figures live in docs, not in comments (src/, and the benches, evaluations and scripts that measure them): a
//     measured figure in a comment goes stale with the next run (several commits did nothing but correct them). A comment says why and cites the docs page and heading that hold the
//     figures; specifications (a default, a limit, a bound the code enforces) stay.

const NUM = String.raw`\d+(?:\.\d+)?`;
const UNIT = String.raw`(?:ms|us|µs|ns|s|MB|GB|kB|KB|MiB|GiB|KiB|%|x)`;
const RATE = String.raw`(?:images|frames|pages|requests|searches|lines|rows|items|photos|queries|tasks|cameras)\/s`;
/** What a measurement looks like in prose: a throughput, a measured range, an approximation, a ratio, an A/B. */
export const MEASURED = [
  new RegExp(String.raw`${NUM}\s?${RATE}`),
  new RegExp(String.raw`${NUM}\s?[-–]\s?${NUM}\s?(?:${UNIT}|${RATE})(?![\w/])`),
  new RegExp(String.raw`(?:~|\babout |\baround )${NUM}\s?${UNIT}(?![\w/])`),
  new RegExp(String.raw`${NUM}\s?(?:x|%) (?:faster|slower|more|less|fewer|the)\b`),
  new RegExp(String.raw`${NUM}\s?${UNIT}(?![\w/])[^.;]*\b(?:against|instead of)\s+~?${NUM}`),
];

export function measuredFiguresInComments(files: SourceFile[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    f.text.split('\n').forEach((line, i) => {
      const comment = /^\s*(?:\/\/|\*|\/\*\*?)(.*)$/.exec(line)?.[1] ?? /\s\/\/(.*)$/.exec(line)?.[1];
      if (comment !== undefined && MEASURED.some((p) => p.test(comment)))
        out.push(`${f.path}:${i + 1}: ${line.trim().slice(0, 120)}`);
    });
  }
  return out;
}

/** The benches', evaluations' and scripts' TypeScript, with paths from the project root (their own packages left out). */
function loadScripts(): SourceFile[] {
  return ['bench', 'eval', 'scripts'].flatMap((dir) =>
    readdirSync(join(projectRoot, dir), { withFileTypes: true, recursive: true })
      .filter((d) => d.isFile() && d.name.endsWith('.ts') && !join(d.parentPath, d.name).includes('node_modules'))
      .map((d) => join(d.parentPath, d.name))
      .map((p) => ({ path: relative(projectRoot, p).split('\\').join('/'), text: readFileSync(p, 'utf8') })),
  );
}

test('rule 10: no comment quotes a measured figure (the docs hold them; a comment cites the heading)', () => {
  assert.deepEqual(
    measuredFiguresInComments(tree),
    [],
    'say why in the comment and move the figures to docs (cite the heading)',
  );
  const scripts = loadScripts();
  assert.ok(
    scripts.some((f) => f.path === 'bench/run.ts') && scripts.some((f) => f.path === 'eval/run.ts'),
    'reads bench/ and eval/',
  );
  assert.deepEqual(
    measuredFiguresInComments(scripts),
    [],
    'the benches, evaluations and scripts too: their figures go in docs/benchmarks.md',
  );
  const planted = [
    { path: 'a.ts', text: '// two sessions made 11-31% more images/s than one (see the capacity page)' },
    { path: 'b.ts', text: '  /** A copy is ~0.13 ms for 3 MB. */\nconst x = 1; // took 27 s instead of 43' },
    {
      path: 'c.ts',
      text: '// 1.5x faster than sharp\n/** Default 30 s; at most 64 MB idle (see the capacity page). */',
    },
    { path: 'd.ts', text: "const limit = 20 * 1024 * 1024; // 20 MB, the documented limit\nconst s = '12 images/s';" },
  ];
  assert.deepEqual(measuredFiguresInComments(planted), [
    'a.ts:1: // two sessions made 11-31% more images/s than one (see the capacity page)',
    'b.ts:1: /** A copy is ~0.13 ms for 3 MB. */',
    'b.ts:2: const x = 1; // took 27 s instead of 43',
    'c.ts:1: // 1.5x faster than sharp',
  ]);
});

// ---------------------------------------------------------------------------------------------------------
// 11. No async context in src/: on Node 20 an AsyncLocalStorage, once entered, and an async_hooks hook turn on
//     promise hooks for the whole process, a cost on every promise of every request (docs/capacity.md,
//     "Front processes"). What a model run needs from its caller (the request's signal, a camera's priority)
//     is passed as an argument (inference/runtime.ts, RunContext).

const ASYNC_CONTEXT =
  /\b(?:AsyncLocalStorage|AsyncResource|createHook|executionAsyncResource)\b|['"]node:async_hooks['"]/;

export function asyncContextUses(files: SourceFile[]): string[] {
  return files
    .filter((f) => ASYNC_CONTEXT.test(stripComments(f.text)))
    .map((f) => `${f.path}: ${stripComments(f.text).match(ASYNC_CONTEXT)![0]}`);
}

test('rule 11: no AsyncLocalStorage, AsyncResource or async hook in src/ (run contexts are arguments)', () => {
  assert.deepEqual(asyncContextUses(tree), []);
  const planted = [
    { path: 'a.ts', text: "import { AsyncLocalStorage } from 'node:async_hooks';" },
    { path: 'b.ts', text: 'const scope = new AsyncResource("x");' },
    { path: 'c.ts', text: '// an AsyncLocalStorage would turn on promise hooks\nconst ctx: RunContext = {};' },
  ];
  assert.deepEqual(
    asyncContextUses(planted).map((v) => v.split(':')[0]),
    ['a.ts', 'b.ts'],
  );
});
