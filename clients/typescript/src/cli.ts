#!/usr/bin/env node
// sightflow-client: the command line on the TypeScript SDK (docs/clients.md, "The CLI"). Answers are JSON on
// stdout (lists and streams as NDJSON, one object a line); progress and errors go to stderr, so the output
// pipes into jq or a file. SIGHTFLOW_API_KEY and SIGHTFLOW_BASE_URL configure it (or --api-key, --base-url).
import { parseArgs } from 'node:util';
import { Sightflow } from './client.js';
import { APIError, SightflowError } from './errors.js';
import { OPERATIONS, type OperationId, type Task } from './generated/api.js';

const USAGE = `usage: sightflow-client <command> [options]

  detect <image>            objects in an image (file path or http(s) URL)
      [--classes a,b] [--confidence 0.5] [--model id]
  ocr <image>               text in an image [--language en]
  describe <image>          a description of an image
  process <video>           create a video task (file path or URL) [--steps detect,ocr] [--model id]
      [--watch]             then print its chunks as NDJSON until the end
      [--wait]              then wait for it, with progress, and print the final record
  watch <task_id>           the task's chunks as NDJSON, resuming across drops [--offset n]
  wait <task_id>            wait until the task is terminal (progress on stderr), print its record
  task <task_id>            the task record
  tasks                     the project's tasks as NDJSON [--status s] [--limit n]
  results <task_id>         the results of a succeeded task
  cancel <task_id>          cancel a task
  collections               the project's collections as NDJSON
  search <collection_id>    --text t | --image path-or-url [--top-k n] [--filter json] [--group-by video]
  add <collection_id>       add items: --text t | --image path-or-url (each repeatable) [--metadata json]
  models                    the models as NDJSON
  call <operation_id>       any operation [--path k=v]... [--query k=v]... [--body json]

options: --api-key (SIGHTFLOW_API_KEY)  --base-url (SIGHTFLOW_BASE_URL)  --max-retries n  --quiet`;

const { values: o, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'api-key': { type: 'string' },
    'base-url': { type: 'string' },
    'max-retries': { type: 'string' },
    classes: { type: 'string' },
    confidence: { type: 'string' },
    model: { type: 'string' },
    language: { type: 'string' },
    steps: { type: 'string' },
    watch: { type: 'boolean' },
    wait: { type: 'boolean' },
    offset: { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string' },
    text: { type: 'string', multiple: true },
    image: { type: 'string', multiple: true },
    'top-k': { type: 'string' },
    filter: { type: 'string' },
    'group-by': { type: 'string' },
    metadata: { type: 'string' },
    path: { type: 'string', multiple: true },
    query: { type: 'string', multiple: true },
    body: { type: 'string' },
    quiet: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});

const out = (x: unknown) => process.stdout.write(`${JSON.stringify(x)}\n`);
const json = (s: string | undefined, what: string): unknown => {
  if (s === undefined) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    throw new UsageError(`${what} is not JSON: ${s}`);
  }
};
const num = (s: string | undefined) => (s === undefined ? undefined : Number(s));
const pairs = (list: string[] | undefined) =>
  Object.fromEntries(
    (list ?? []).map((p) => {
      const i = p.indexOf('=');
      if (i < 0) throw new UsageError(`Expected key=value but received ${p}`);
      return [p.slice(0, i), p.slice(i + 1)];
    }),
  );

class UsageError extends Error {}

function arg(i: number, what: string): string {
  const v = positionals[i];
  if (!v) throw new UsageError(`missing ${what}`);
  return v;
}

function progress(task: Task): void {
  if (o.quiet) return;
  const p = task.progress;
  const total = p?.total_frames ? `/${p.total_frames}` : '';
  const line = `${task.id} ${task.status}: frame ${p?.frame_index ?? '-'}${total}, ${p?.processed_frames ?? 0} processed`;
  if (process.stderr.isTTY) process.stderr.write(`\r${line}\x1b[K`);
  else process.stderr.write(`${line}\n`);
}

async function watch(client: Sightflow, id: string, offset = 0): Promise<void> {
  const stream = client.tasks.stream(id, {
    offset,
    onResume: (at) => {
      if (!o.quiet) process.stderr.write(`stream dropped; resuming at byte ${at}\n`);
    },
  });
  for await (const chunk of stream) out(chunk);
}

async function wait(client: Sightflow, id: string): Promise<void> {
  let last = '';
  const task = await client.tasks.wait(id, {
    onProgress: (t) => {
      const k = `${t.status}:${t.progress?.frame_index}`;
      if (k !== last) {
        last = k;
        progress(t);
      }
    },
  });
  if (process.stderr.isTTY && !o.quiet) process.stderr.write('\n');
  out(task);
}

async function main(): Promise<number> {
  const command = positionals[0];
  if (o.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return command || o.help ? 0 : 2;
  }
  const client = new Sightflow({ apiKey: o['api-key'], baseURL: o['base-url'], maxRetries: num(o['max-retries']) });
  const image = () => arg(1, 'image (a file path or an http(s) URL)');
  switch (command) {
    case 'detect':
      out(
        await client.vision.detect(image(), {
          classes: o.classes?.split(','),
          confidence_threshold: num(o.confidence),
          model: o.model,
        }),
      );
      return 0;
    case 'ocr':
      out(await client.vision.ocr(image(), { language: o.language } as never));
      return 0;
    case 'describe':
      out(await client.vision.describe(image(), {}));
      return 0;
    case 'process': {
      const steps = (o.steps ?? 'detect').split(',').map((model) => ({ model }));
      const task = await client.tasks.process(arg(1, 'video (a file path or URL)'), { steps, model: o.model } as never);
      if (o.watch) {
        if (!o.quiet) process.stderr.write(`task ${task.id}\n`);
        await watch(client, task.id);
        return 0;
      }
      if (o.wait) {
        await wait(client, task.id);
        return 0;
      }
      out(task);
      return 0;
    }
    case 'watch':
      await watch(client, arg(1, 'task id'), num(o.offset));
      return 0;
    case 'wait':
      await wait(client, arg(1, 'task id'));
      return 0;
    case 'task':
      out(await client.tasks.get(arg(1, 'task id')));
      return 0;
    case 'tasks':
      for await (const t of client.tasks.list({ status: o.status, limit: num(o.limit) })) out(t);
      return 0;
    case 'results':
      out(await client.tasks.results(arg(1, 'task id')));
      return 0;
    case 'cancel':
      out(await client.tasks.cancel(arg(1, 'task id')));
      return 0;
    case 'collections':
      for await (const c of client.collections.list()) out(c);
      return 0;
    case 'models':
      for await (const m of client.models.list()) out(m);
      return 0;
    case 'search': {
      const id = arg(1, 'collection id');
      if (!o.text?.length && !o.image?.length) throw new UsageError('search needs --text or --image');
      out(
        await client.collections.search(id, {
          text: o.text?.[0],
          image: o.image?.[0],
          top_k: num(o['top-k']),
          filter: json(o.filter, '--filter') as Record<string, unknown> | undefined,
          group_by: o['group-by'] as 'video' | undefined,
        }),
      );
      return 0;
    }
    case 'add': {
      const id = arg(1, 'collection id');
      const metadata = json(o.metadata, '--metadata') as Record<string, unknown> | undefined;
      const items = [
        ...(o.text ?? []).map((text) => ({ text, metadata })),
        ...(o.image ?? []).map((img) => ({ image: img, metadata })),
      ];
      if (!items.length) throw new UsageError('add needs --text or --image');
      out(await client.collections.index(id, { items } as never));
      return 0;
    }
    case 'call': {
      const op = arg(1, 'operation id') as OperationId;
      if (!OPERATIONS[op])
        throw new UsageError(`unknown operation ${op}; known: ${Object.keys(OPERATIONS).join(', ')}`);
      const r = await client.call(op, {
        path: pairs(o.path) as never,
        query: pairs(o.query) as never,
        body: json(o.body, '--body') as never,
      });
      if (r instanceof Response) process.stdout.write(Buffer.from(await r.arrayBuffer()));
      else out(r);
      return 0;
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`sightflow-client: ${err.message}\n\n${USAGE}\n`);
      process.exitCode = 2;
      return;
    }
    if (err instanceof APIError) {
      process.stderr.write(
        `sightflow-client: ${err.message}${err.param ? ` (param ${err.param})` : ''}${err.requestId ? ` [request ${err.requestId}]` : ''}\n`,
      );
    } else if (err instanceof SightflowError) {
      process.stderr.write(`sightflow-client: ${err.name}: ${err.message}\n`);
    } else {
      process.stderr.write(`sightflow-client: ${(err as Error)?.stack ?? err}\n`);
    }
    process.exitCode = 1;
  },
);
