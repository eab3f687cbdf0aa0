// `sightflow models list|prepare|verify [ids...] [--force] [--json]`. Returns the process exit code.
// prepare shows a progress bar on a terminal and one line per step otherwise (logs, CI). A CLIP model's id
// stands for its two encoders. Skipped bring-your-own manifests are reported on stderr by every command
// (and fail verify).
import { ModelRegistry, type PrepareProgress } from './registry.js';

const USAGE = 'usage: sightflow models list|prepare|verify [model-id...] [--force] [--json]';

export async function modelsCli(args: string[], dataDir: string): Promise<number> {
  const [cmd, ...rest] = args;
  const json = rest.includes('--json');
  const force = rest.includes('--force');
  const ids = rest.filter((a) => !a.startsWith('--'));
  if (!cmd || !['list', 'prepare', 'verify'].includes(cmd)) {
    console.error(USAGE);
    return 2;
  }
  const registry = await ModelRegistry.open(dataDir);
  for (const p of registry.problems) console.error(`skipped: ${p.message}`);
  const known = registry.list().map((m) => m.manifest.id);
  const families = new Map(registry.clip.map((c) => [c.manifest.id, [c.visionId, c.textId]]));
  const unknown = ids.filter((id) => !known.includes(id) && !families.has(id));
  if (unknown.length) {
    console.error(`unknown model ${unknown.join(', ')}; known: ${[...known, ...families.keys()].join(', ')}`);
    return 2;
  }
  const selected = ids.length ? [...new Set(ids.flatMap((id) => families.get(id) ?? [id]))] : known;

  if (cmd === 'list') {
    const rows = registry.list().filter((m) => selected.includes(m.manifest.id)).map((m) => ({
      id: m.manifest.id,
      task: m.manifest.task,
      format: m.manifest.format,
      source: 'package' in m.manifest.source ? `${m.manifest.source.package}/${m.manifest.source.path}` : m.manifest.source.file,
      prepared: registry.isPrepared(m.manifest.id),
      builtin: m.builtin,
    }));
    if (json) console.log(JSON.stringify(rows));
    else {
      console.log(table(['id', 'task', 'format', 'prepared', 'source'], rows.map((r) => [r.id, r.task, r.format, r.prepared ? 'yes' : 'no', r.source])));
      for (const c of registry.clip) console.log(`embedding model ${c.manifest.id}: clip (${c.visionId} + ${c.textId}, tokenizer ${c.tokenizerPath})`);
      console.log(`models in ${registry.modelsDir}`);
    }
    return 0;
  }

  if (cmd === 'prepare') {
    const bar = progressPrinter(json);
    let failed = 0;
    const results = [];
    for (const id of selected) {
      try {
        const r = await registry.prepare(id, { force, onProgress: bar });
        results.push({ ...r, ok: true });
        if (!json) console.log(`${id}: ${r.action} in ${Math.round(r.ms)} ms -> ${r.path}`);
      } catch (e) {
        failed++;
        results.push({ id, ok: false, error: (e as Error).message });
        console.error(`${id}: FAILED: ${(e as Error).message}`);
      }
    }
    if (json) console.log(JSON.stringify(results));
    return failed ? 1 : 0;
  }

  let failed = registry.problems.length;
  const results = [];
  for (const id of selected) {
    const r = await registry.verify(id);
    results.push(r);
    if (!r.ok) failed++;
    if (!json) console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${id}: ${r.detail}`);
  }
  if (json) console.log(JSON.stringify(results));
  return failed ? 1 : 0;
}

function progressPrinter(quiet: boolean): (p: PrepareProgress) => void {
  const tty = process.stderr.isTTY === true;
  let last = '';
  return (p) => {
    if (quiet) return;
    if (tty) {
      const width = 24;
      const filled = Math.round(p.fraction * width);
      process.stderr.write(`\r${p.id.padEnd(16)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${p.phase.padEnd(8)}`);
      if (p.phase === 'done') process.stderr.write('\n');
    } else if (`${p.id}:${p.phase}` !== last) {
      process.stderr.write(`${p.id}: ${p.phase}${p.detail ? ` (${p.detail})` : ''}\n`);
    }
    last = `${p.id}:${p.phase}`;
  };
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}
