// Video task use cases over the task store: enqueue (options checked against the detector's classes and
// the tracker's settings first, so bad ones are refused now rather than failing the task later), list, get,
// results and cancel. Every call is project-scoped: another project's task id is a 404 ApiError. No HTTP
// here; streaming a task's chunks is the route's (stream.ts), as it writes the response itself. Tasks are
// billed by the worker when they finish (results.ts).
import { errors } from '../errors.js';
import type { Services } from '../services.js';
import type { Caller } from '../usage/billing.js';
import { planSteps } from './pipeline/plan.js';
import { trackerSettings } from './pipeline/target-tracker.js';
import type { ProcessBody } from './schemas.js';
import type { TaskStore, ListFilters } from './task-store.js';

/** Who a read runs for: the project owns the task. */
type Owner = Pick<Caller, 'projectId'>;

export class TasksService {
  constructor(private readonly s: Services, private readonly store: TaskStore) {}

  /** Enqueues a task for the caller's key; answers {id, status, stream_url}. */
  async create(caller: Pick<Caller, 'projectId' | 'keyId'>, body: ProcessBody) {
    planSteps(body as never, (await this.s.vision.detector()).labels);
    trackerSettings((body as { tracker?: never }).tracker);
    const rec = await this.store.create(caller.projectId, caller.keyId, body);
    return { id: rec.id, status: rec.status, stream_url: rec.stream_url };
  }

  list(caller: Owner, filters: ListFilters) {
    return this.store.list(caller.projectId, filters);
  }

  /** The status record; include 'request' echoes the body it was created with (any other value is a 400). */
  async get(caller: Owner, id: string, include?: string) {
    if (include !== undefined && include !== 'request') {
      throw errors.invalidParam('include', `Expected "request" for include but received ${JSON.stringify(include)}`);
    }
    return this.store.get(caller.projectId, id, include === 'request');
  }

  results(caller: Owner, id: string) {
    return this.store.results(caller.projectId, id);
  }

  cancel(caller: Owner, id: string) {
    return this.store.cancel(caller.projectId, id);
  }
}
