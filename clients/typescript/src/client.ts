// The sightflow client: one object per resource over one Transport (./core.ts). Every operation of the
// OpenAPI document is reachable through `call(operationId, ...)` (the generated table, ./generated/api.ts);
// the resources are the same operations with the helpers a caller wants: uploads, lists to `for await`
// over, a resuming stream, waiting for a task, replaying a moment, verifying a webhook.
import { Transport, type ClientOptions, type QueryValue, type RequestOptions } from './core.js';
import {
  OPERATIONS,
  type Collection,
  type Item,
  type Model,
  type OperationId,
  type Operations,
  type Project,
  type Task,
  type TaskCreated,
  type TaskResults,
} from './generated/api.js';
import { cursorPages, offsetPages, PagePromise, type Page } from './pagination.js';
import { TaskStream, type StreamOptions, type TaskChunk } from './stream.js';
import { base64Of, imageRequest, isDataUri, isUrl, toBlob, videoInput, type Uploadable } from './uploads.js';
import { verifyWebhook, type HeaderSource, type VerifyOptions, type WebhookEvent } from './webhooks.js';
import { APIUserAbortError, WaitTimeoutError } from './errors.js';

type Op<K extends OperationId> = Operations[K];
export type DetectParams = Omit<Op<'vision.detect'>['body'], 'image' | 'image_base64'>;
export type DetectResult = Op<'vision.detect'>['response'];
export type OcrParams = Omit<Op<'vision.ocr'>['body'], 'image' | 'image_base64'>;
export type OcrResult = Op<'vision.ocr'>['response'];
export type DescribeParams = Omit<Op<'vision.describe'>['body'], 'image' | 'image_base64'>;
export type DescribeResult = Op<'vision.describe'>['response'];
export type TaskCreateParams = Op<'video.process'>['body'];
export type TaskListParams = Omit<Op<'video.tasks.list'>['query'], 'cursor'>;
export type TaskList = Op<'video.tasks.list'>['response'];
export type CollectionCreateParams = Op<'vectors.collections.create'>['body'];
export type IndexParams = Op<'vectors.collections.index'>['body'];
export type IndexResult = Op<'vectors.collections.index'>['response'];
export type SearchParams = Omit<Op<'vectors.collections.search'>['body'], 'image' | 'image_base64'>;
export type SearchResponse = Op<'vectors.collections.search'>['response'];
export type ItemList = Op<'vectors.collections.items.list'>['response'];

export const TERMINAL_STATES = ['succeeded', 'failed', 'cancelled'] as const;

export interface CallArgs<K extends OperationId> {
  path?: Op<K>['path'];
  query?: Op<K>['query'];
  body?: Op<K>['body'];
}

/** Where a moment's chunks are (a search result's `moment`, or anything with these fields). */
export interface MomentRef {
  task_id: string;
  stream_offset: number;
  end_ms?: number;
}

export class Sightflow {
  readonly transport: Transport;
  readonly vision: Vision;
  readonly tasks: Tasks;
  readonly collections: Collections;
  readonly moments: Moments;
  readonly models: Models;
  readonly webhooks: Webhooks;

  constructor(opts: ClientOptions = {}) {
    this.transport = new Transport(opts);
    this.vision = new Vision(this.transport);
    this.tasks = new Tasks(this.transport);
    this.collections = new Collections(this.transport);
    this.moments = new Moments(this.transport);
    this.models = new Models(this.transport);
    this.webhooks = new Webhooks();
  }

  /** The key's project. */
  project(opts?: RequestOptions): Promise<Project> {
    return this.transport.request({ method: 'GET', path: '/v1/project' }, opts);
  }

  /**
   * Any list operation of the document (`admin.projects.list`, `vectors.collections.items.list`, ...) as a
   * list to `for await` over: the next page is asked for by `cursor` when the answer has `next_cursor`, by
   * `offset` when it has `total`, and not at all otherwise (the answer is the whole list).
   */
  paginate<K extends OperationId, T = unknown>(
    operationId: K,
    args: CallArgs<K> = {},
    opts?: RequestOptions,
  ): PagePromise<T> {
    const query = (args.query ?? {}) as Record<string, QueryValue>;
    return new PagePromise<T>((prev) => {
      if (!prev) return this.call(operationId, args, opts) as Promise<Page<T>>;
      if (prev.next_cursor)
        return this.call(
          operationId,
          { ...args, query: { ...query, cursor: prev.next_cursor } as never },
          opts,
        ) as Promise<Page<T>>;
      if (typeof prev.total === 'number') {
        const offset = (prev.offset ?? Number(query.offset ?? 0)) + prev.data.length;
        return offset < prev.total
          ? (this.call(operationId, { ...args, query: { ...query, offset } as never }, opts) as Promise<Page<T>>)
          : null;
      }
      return null;
    });
  }

  /**
   * Any operation of the OpenAPI document by its operationId, with the document's path parameters, query
   * and JSON body; the same retries, Idempotency-Key and errors as every resource method. Operations that
   * answer something other than JSON (streams, images, files) answer the Response.
   */
  call<K extends OperationId>(
    operationId: K,
    args: CallArgs<K> = {},
    opts?: RequestOptions,
  ): Promise<Op<K>['response']> {
    const spec = OPERATIONS[operationId];
    if (!spec) throw new TypeError(`Unknown operation ${String(operationId)}`);
    const json = spec.responseType === 'application/json' || spec.responseType === null;
    return this.transport.request(
      {
        method: spec.method,
        path: spec.path,
        pathParams: args.path as Record<string, string> | undefined,
        query: args.query as Record<string, QueryValue> | undefined,
        json: args.body,
        idempotencyKey: spec.idempotencyKey,
        auth: spec.auth,
        raw: !json,
      },
      opts,
    );
  }
}

class Vision {
  constructor(private readonly t: Transport) {}

  private async image<R>(path: string, image: Uploadable, params: object, opts?: RequestOptions): Promise<R> {
    const req = await imageRequest(image, params as Record<string, unknown>);
    return this.t.request<R>(
      { method: 'POST', path, ...('json' in req ? { json: req.json } : { body: req.body }) },
      opts,
    );
  }

  /** Objects in an image: a URL, data URI, file path, bytes, Blob or stream. */
  detect(image: Uploadable, params: DetectParams = {}, opts?: RequestOptions): Promise<DetectResult> {
    return this.image('/v1/vision/detect', image, params, opts);
  }

  ocr(image: Uploadable, params: OcrParams = {}, opts?: RequestOptions): Promise<OcrResult> {
    return this.image('/v1/vision/ocr', image, params, opts);
  }

  describe(image: Uploadable, params: DescribeParams = {}, opts?: RequestOptions): Promise<DescribeResult> {
    return this.image('/v1/vision/describe', image, params, opts);
  }
}

export interface WaitOptions {
  signal?: AbortSignal;
  /** Milliseconds between polls (default 1000). */
  pollInterval?: number;
  /** Give up after this many milliseconds (default: never). */
  timeout?: number;
  /** Called with the task record after every poll. */
  onProgress?: (task: Task) => void;
}

class Tasks {
  constructor(private readonly t: Transport) {}

  /** POST /v1/video/process. One Idempotency-Key for all retries: a retried create answers the same task. */
  create(body: TaskCreateParams, opts?: RequestOptions): Promise<TaskCreated> {
    return this.t.request({ method: 'POST', path: '/v1/video/process', json: body, idempotencyKey: true }, opts);
  }

  /** A task from a video (URL, live source URL, file path, bytes, Blob or stream) and its steps. */
  async process(video: Uploadable, body: Omit<TaskCreateParams, 'input'>, opts?: RequestOptions): Promise<TaskCreated> {
    return this.create({ ...body, input: [await videoInput(video)] } as TaskCreateParams, opts);
  }

  get(id: string, query: { include?: string } = {}, opts?: RequestOptions): Promise<Task> {
    return this.t.request({ method: 'GET', path: '/v1/video/tasks/{id}', pathParams: { id }, query }, opts);
  }

  /** The project's tasks, newest first: await for one page, `for await` for all of them. */
  list(query: TaskListParams = {}, opts?: RequestOptions): PagePromise<Task, TaskList & Page<Task>> {
    return cursorPages<Task, TaskList & Page<Task>>((cursor) =>
      this.t.request(
        {
          method: 'GET',
          path: '/v1/video/tasks',
          query: { ...query, cursor } as Record<string, QueryValue>,
        },
        opts,
      ),
    );
  }

  cancel(id: string, opts?: RequestOptions): Promise<Task> {
    return this.t.request({ method: 'POST', path: '/v1/video/tasks/{id}/cancel', pathParams: { id } }, opts);
  }

  results(id: string, opts?: RequestOptions): Promise<TaskResults> {
    return this.t.request({ method: 'GET', path: '/v1/video/tasks/{id}/results', pathParams: { id } }, opts);
  }

  /** The task's chunks, in order, each once, resumed across drops until [DONE]. */
  stream(id: string, opts: StreamOptions = {}): TaskStream {
    return new TaskStream(this.t, id, opts);
  }

  /** Polls until the task is succeeded, failed or cancelled, and answers its record. */
  async wait(id: string, opts: WaitOptions = {}): Promise<Task> {
    const until = opts.timeout === undefined ? Infinity : Date.now() + opts.timeout;
    for (;;) {
      const task = await this.get(id, {}, { signal: opts.signal });
      opts.onProgress?.(task);
      if ((TERMINAL_STATES as readonly string[]).includes(task.status)) return task;
      if (Date.now() >= until)
        throw new WaitTimeoutError(`Task ${id} is still ${task.status} after ${opts.timeout} ms`);
      await pause(Math.min(opts.pollInterval ?? 1000, Math.max(0, until - Date.now())), opts.signal);
    }
  }
}

class Collections {
  constructor(private readonly t: Transport) {}

  create(body: CollectionCreateParams, opts?: RequestOptions): Promise<Collection> {
    return this.t.request({ method: 'POST', path: '/v1/vectors/collections', json: body, idempotencyKey: true }, opts);
  }

  get(id: string, opts?: RequestOptions): Promise<Collection> {
    return this.t.request({ method: 'GET', path: '/v1/vectors/collections/{id}', pathParams: { id } }, opts);
  }

  /** The project's collections (one page: the server answers them all). */
  list(opts?: RequestOptions): PagePromise<Collection> {
    return new PagePromise<Collection>((prev) =>
      prev ? null : this.t.request({ method: 'GET', path: '/v1/vectors/collections' }, opts),
    );
  }

  delete(id: string, opts?: RequestOptions): Promise<{ id: string; deleted: boolean }> {
    return this.t.request({ method: 'DELETE', path: '/v1/vectors/collections/{id}', pathParams: { id } }, opts);
  }

  /**
   * Adds items (text, an image, audio); one Idempotency-Key across retries. An item's `image` may be anything
   * an image upload takes (a path, bytes, a Blob, a stream): it is sent as `image_base64`.
   */
  async index(
    id: string,
    body: Omit<IndexParams, 'items'> & {
      items: Array<
        IndexParams['items'][number] | (Omit<IndexParams['items'][number], 'image'> & { image?: Uploadable })
      >;
    },
    opts?: RequestOptions,
  ): Promise<IndexResult> {
    const items = await Promise.all(
      body.items.map(async (item) => {
        const image = (item as { image?: Uploadable }).image;
        if (image === undefined || image === null || (typeof image === 'string' && (isUrl(image) || isDataUri(image))))
          return item;
        const { image: _, ...rest } = item as Record<string, unknown>;
        return {
          ...rest,
          image_base64: base64Of(
            new Uint8Array(await (await toBlob(image as Exclude<Uploadable, string> | string)).arrayBuffer()),
          ),
        };
      }),
    );
    return this.t.request(
      {
        method: 'POST',
        path: '/v1/vectors/collections/{id}/index',
        pathParams: { id },
        json: { ...body, items },
        idempotencyKey: true,
      },
      opts,
    );
  }

  /** Searches by text, audio, or an image (URL, data URI, file path, bytes, Blob or stream). */
  async search(
    id: string,
    params: SearchParams & { image?: Uploadable },
    opts?: RequestOptions,
  ): Promise<SearchResponse> {
    const { image, ...rest } = params;
    const req = image === undefined ? { json: rest } : await imageRequest(image, rest);
    return this.t.request(
      {
        method: 'POST',
        path: '/v1/vectors/collections/{id}/search',
        pathParams: { id },
        ...('json' in req ? { json: req.json } : { body: req.body }),
      },
      opts,
    );
  }

  /** The collection's items: await for one page, `for await` for all of them. */
  items(
    id: string,
    query: { limit?: number; offset?: number } = {},
    opts?: RequestOptions,
  ): PagePromise<Item, ItemList & Page<Item>> {
    return offsetPages<Item, ItemList & Page<Item>>(query.offset ?? 0, (offset) =>
      this.t.request(
        {
          method: 'GET',
          path: '/v1/vectors/collections/{id}/items',
          pathParams: { id },
          query: { limit: query.limit, offset },
        },
        opts,
      ),
    );
  }

  deleteItems(
    id: string,
    body: { ids: string[] } | { filter: Record<string, unknown> },
    opts?: RequestOptions,
  ): Promise<{ deleted: number; not_found: string[] }> {
    return this.t.request(
      { method: 'DELETE', path: '/v1/vectors/collections/{id}/items', pathParams: { id }, json: body },
      opts,
    );
  }
}

class Moments {
  constructor(private readonly t: Transport) {}

  /**
   * The chunks of one moment (a search result's `moment`): its task's stream from `stream_offset`, up to the
   * first chunk past `end_ms` (docs/moments.md, "Replaying a moment"). Resumes across drops like any stream.
   */
  async *replay(
    hit: MomentRef | { moment: MomentRef },
    opts: Omit<StreamOptions, 'offset'> = {},
  ): AsyncGenerator<TaskChunk> {
    const m = 'moment' in hit ? hit.moment : hit;
    for await (const chunk of new TaskStream(this.t, m.task_id, { ...opts, offset: m.stream_offset })) {
      // A chunk without a stream time (the terminal one) is not past the moment.
      const t = chunk.stream_info?.stream_time_ms;
      if (m.end_ms !== undefined && t !== undefined && t > m.end_ms) return;
      yield chunk;
    }
  }
}

class Models {
  constructor(private readonly t: Transport) {}

  list(opts?: RequestOptions): PagePromise<Model> {
    return new PagePromise<Model>((prev) =>
      prev ? null : this.t.request({ method: 'GET', path: '/v1/models' }, opts),
    );
  }

  get(id: string, opts?: RequestOptions): Promise<Model> {
    return this.t.request({ method: 'GET', path: '/v1/models/{id}', pathParams: { id } }, opts);
  }
}

class Webhooks {
  /** Checks a delivery's signature and age and answers its payload (throws WebhookVerificationError). */
  verify(
    headers: HeaderSource,
    body: string | Uint8Array,
    secret: string,
    opts?: VerifyOptions,
  ): Promise<WebhookEvent> {
    return verifyWebhook(headers, body, secret, opts);
  }
}

const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError('Wait was aborted'));
    const onAbort = () => {
      clearTimeout(t);
      reject(new APIUserAbortError('Wait was aborted'));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
