// The documentation holds together: every relative link in README.md, CONTRIBUTING.md and docs/*.md reaches
// an existing file and, with a #fragment, an existing heading; every comment that cites a page
// (`docs/video.md, "The stream"`, `README "Quick start"`) names a page and heading that exist; and the
// README keeps the two quick-start commands and the two first-start lines that CI's fresh-root check reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { projectRoot } from '../../src/base/paths.js';

const root = projectRoot;

/** Markdown without its fenced code blocks and inline code spans, so a `# comment` in a shell block is no heading. */
function prose(md: string): string {
  return md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings, with GitHub's -1, -2 suffixes for repeats. */
export function anchors(md: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of prose(md).matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The headings' own texts, for comments that cite a heading by name. */
function headings(md: string): Set<string> {
  return new Set([...prose(md).matchAll(/^#{1,6} +(.+?) *#* *$/gm)].map((m) => m[1]!));
}

interface Page {
  path: string;
  text: string;
}

/** Broken relative links of the given pages: a missing file, or a fragment that names no heading there. */
export function brokenLinks(pages: Page[], read: (path: string) => string | null): string[] {
  const broken: string[] = [];
  for (const page of pages) {
    for (const m of prose(page.text).matchAll(/\[[^\]]*\]\(([^)\s]+)(?: "[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [file, fragment] = target.split('#', 2) as [string, string | undefined];
      const path = file === '' ? page.path : join(dirname(page.path), file);
      const text = read(path);
      if (text === null) {
        broken.push(`${page.path}: ${target} (no such file)`);
        continue;
      }
      if (fragment !== undefined && !(path.endsWith('.md') && anchors(text).has(fragment))) {
        broken.push(`${page.path}: ${target} (no such heading)`);
      }
    }
  }
  return broken;
}

function readRel(path: string): string | null {
  const abs = resolve(root, path);
  if (!existsSync(abs)) return null;
  return statSync(abs).isDirectory() ? '' : readFileSync(abs, 'utf8');
}

const pagePaths = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const pages: Page[] = pagePaths.map((path) => ({ path, text: readFileSync(join(root, path), 'utf8') }));

test('every relative link in README.md, CONTRIBUTING.md and docs/ reaches a file and a heading', () => {
  assert.ok(pages.length >= 10, `read ${pages.length} pages`);
  assert.deepEqual(brokenLinks(pages, readRel), []);
});

test('the link checker finds a missing page and a missing heading', () => {
  const files: Record<string, string> = {
    'docs/a.md':
      '# A\n\n## The stream\n\n```sh\n# not a heading\n```\n[ok](b.md#b-two) [self](#the-stream) [web](https://x.test/y)\n' +
      '[gone](c.md) [bad](b.md#nope) [code](#not-a-heading) `[inline](c.md)`\n',
    'docs/b.md': '# B\n\n## B: two\n',
  };
  const read = (p: string) => files[p] ?? null;
  assert.deepEqual(brokenLinks([{ path: 'docs/a.md', text: files['docs/a.md']! }], read), [
    'docs/a.md: c.md (no such file)',
    'docs/a.md: b.md#nope (no such heading)',
    'docs/a.md: #not-a-heading (no such heading)',
  ]);
  assert.equal(slug("MCP: sightflow's tools for agents"), 'mcp-sightflows-tools-for-agents');
  assert.deepEqual([...anchors('# X\n## Items\n### Items\n')], ['x', 'items', 'items-1']);
});

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter(
      (d) =>
        d.isFile() &&
        /\.(ts|tsx|mjs|js|sh|md)$/.test(d.name) &&
        !d.parentPath.includes('node_modules') &&
        !d.parentPath.includes('/dist'),
    )
    .map((d) => join(d.parentPath, d.name));
}

/** Citations of a page in code: `docs/<page>.md` with an optional quoted heading, or `README "<heading>"`. */
export function badCitations(files: Page[], read: (path: string) => string | null): string[] {
  const bad: string[] = [];
  for (const f of files) {
    for (const m of f.text.matchAll(/\b(docs\/[a-z0-9-]+\.md|README)(?:,? *("[^"\n]+"))?/g)) {
      const page = m[1] === 'README' ? 'README.md' : m[1]!;
      if (m[1] === 'README' && m[2] === undefined) continue; // "the README" in prose names no heading
      const text = read(page);
      if (text === null) {
        bad.push(`${f.path}: ${page} does not exist`);
        continue;
      }
      if (m[2] !== undefined && !headings(text).has(m[2].slice(1, -1)))
        bad.push(`${f.path}: ${page} has no heading ${m[2]}`);
    }
  }
  return bad;
}

test('comments cite pages and headings that exist', () => {
  const files = ['src', 'test', 'bench', 'eval', 'scripts', 'console/src', 'models', 'docs']
    .flatMap((d) => sourceFiles(join(root, d)))
    .concat(['README.md', 'CONTRIBUTING.md'].map((f) => join(root, f)))
    .filter((p) => !p.endsWith('test/repo/docs.test.ts'))
    .map((p) => ({ path: relative(root, p), text: readFileSync(p, 'utf8') }));
  assert.ok(files.length > 100, `read ${files.length} files`);
  assert.deepEqual(badCitations(files, readRel), []);
  const planted = [
    {
      path: 'src/x.ts',
      text: '// (docs/video.md, "The stream") docs/gone.md README "Nope" the README\'s commands docs/api.md "Usage"',
    },
  ];
  assert.deepEqual(badCitations(planted, readRel), [
    'src/x.ts: docs/gone.md does not exist',
    'src/x.ts: README.md has no heading "Nope"',
  ]);
});

test('README keeps the two quick-start commands and the first-start lines CI reads', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  const quickStart = blocks.find((b) => b.includes('./quickstart serve'));
  assert.ok(quickStart, 'no sh block with ./quickstart serve');
  assert.match(quickStart, /^\.\/quickstart serve +#/m);
  assert.match(quickStart, /^\.\/quickstart test +#/m);
  // The patterns scripts/ci/fresh-root.sh greps the server's output for; the README shows those lines.
  const freshRoot = readFileSync(join(root, 'scripts', 'ci', 'fresh-root.sh'), 'utf8');
  assert.ok(freshRoot.includes(`grep -E '^sightflow: created project "default" with API key sk_sf_'`));
  assert.ok(freshRoot.includes(`grep -E '^sightflow: console at http://[^ ]+/console, admin token sf_admin_'`));
  assert.match(readme, /^sightflow: created project "default" with API key sk_sf_/m);
  assert.match(readme, /^sightflow: console at http:\/\/[^ ]+\/console, admin token sf_admin_/m);
});

test('every metric src/metrics/ exports is listed in docs/metrics.md', () => {
  const dir = join(root, 'src/metrics');
  const names = new Set(
    readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(/'(sightflow_[a-z0-9_]+)'/g)].map((m) => m[1]!)),
  );
  assert.ok(names.size > 40, `found ${names.size} names`);
  const page = readFileSync(join(root, 'docs/metrics.md'), 'utf8');
  assert.deepEqual(
    [...names].filter((n) => !page.includes(`\`${n}\``)),
    [],
  );
});
