// Video task use cases over the task store: enqueue (options checked against the detector's classes and
// the tracker's settings first, so bad ones are refused now rather than failing the task later; then the
// input checked or staged, task-input.ts, and the task inserted), list, get,
// results and cancel. Every call is project-scoped: another project's task id is a 404 ApiError. No HTTP
// here; streaming a task's chunks is the route's (stream/stream.ts), as it writes the response itself. Tasks are
// billed by the worker when they finish (worker/results.ts).
import { errors } from '../../base/errors.js';
import type { Services } from '../../services/services.js';
import type { Caller } from '../../usage/billing.js';
import { checkSteps } from '../steps/plan.js';
import { trackerSettings } from '../pipeline/target-tracker.js';
import type { ProcessBody } from '../schemas.js';
import type { TaskStore, ListFilters } from './task-store.js';
import { stageInput, stagedInputKey } from './task-input.js';
import { newId } from '../../base/ids.js';
import { stepRecordFields, WEBHOOK_EVENTS } from '../steps/step-list.js';
import { checkWebhookSecret, checkWebhookUrl, deliveriesOf, newWebhookSecret } from './webhooks.js';
import { workerStepsCreated } from '../steps/worker-steps.js';
import type { StepServices } from '../pipeline/frame-step.js';
import { checkPublish } from '../mqtt/publish.schema.js';

const INCLUDES = ['request', 'webhook_deliveries'] as const;

/** The events a webhook asks for are some step's: that step must be among the task's steps. */
function checkWebhookEvents(body: ProcessBody): void {
  for (const e of body.webhook?.events ?? []) {
    const owner = WEBHOOK_EVENTS.get(e);
    if (owner !== undefined && !body.steps.some((st) => st.model === owner)) {
      const a = /^[aeiou]/.test(owner) ? 'an' : 'a';
      throw errors.invalidParam(
        'webhook.events',
        `Expected ${a} ${owner} step in steps for webhook.events (they are its events)`,
      );
    }
  }
}

/** Who a read runs for: the project owns the task. */
type Owner = Pick<Caller, 'projectId'>;

export class TasksService {
  constructor(
    private readonly s: Services,
    private readonly store: TaskStore,
    private readonly steps: StepServices,
  ) {}

  /**
   * Enqueues a task for the caller's key; answers {id, status, stream_url}, plus {webhook: {url, secret}} when
   * the request asked for a webhook without a secret (the generated one is shown only here).
   */
  async create(caller: Pick<Caller, 'projectId' | 'keyId' | 'traceparent'>, body: ProcessBody) {
    await checkSteps(body, this.s.taskModels, { projectId: caller.projectId, services: this.steps });
    trackerSettings(body.tracker);
    checkPublish(body.publish, this.s.config.mqtt);
    const w = body.webhook;
    const webhook = w
      ? {
          url: checkWebhookUrl(w.url),
          secret: w.secret !== undefined ? checkWebhookSecret(w.secret) : newWebhookSecret(),
        }
      : undefined;
    checkWebhookEvents(body);
    const task = await stageInput(
      this.s,
      { id: newId('vt'), projectId: caller.projectId, keyId: caller.keyId },
      body,
      webhook,
    );
    if (caller.traceparent) task.job.traceparent = caller.traceparent;
    const rec = await this.store.insert(task, webhook, (q) => workerStepsCreated(q, task.id, body));
    return {
      id: rec.id,
      status: rec.status,
      stream_url: rec.stream_url,
      ...(webhook && w?.secret === undefined ? { webhook } : {}),
    };
  }

  list(caller: Owner, filters: ListFilters) {
    return this.store.list(caller.projectId, filters);
  }

  /**
   * The status record. include (a comma list): 'request' echoes the body it was created with,
   * 'webhook_deliveries' adds the task's webhook deliveries; any other value is a 400.
   */
  async get(caller: Owner, id: string, include?: string) {
    const wanted = include === undefined ? [] : include.split(',').map((x) => x.trim());
    if (wanted.some((x) => !(INCLUDES as readonly string[]).includes(x))) {
      throw errors.invalidParam(
        'include',
        `Expected a comma list of ${INCLUDES.map((x) => `"${x}"`).join(', ')} for include but received ${JSON.stringify(include)}`,
      );
    }
    const rec = {
      ...(await this.store.get(caller.projectId, id, wanted.includes('request'))),
      ...(await stepRecordFields(this.s.db, id)),
    };
    // An uploaded video: a presigned link to the staged file (byte ranges), so a viewer can play what was counted.
    const staged = stagedInputKey(caller.projectId, id);
    if (await this.s.blobs.stat(staged)) rec.input_url = this.s.presign(staged);
    return wanted.includes('webhook_deliveries') ? { ...rec, webhook_deliveries: await deliveriesOf(this.s, id) } : rec;
  }

  results(caller: Owner, id: string) {
    return this.store.results(caller.projectId, id);
  }

  cancel(caller: Owner, id: string) {
    return this.store.cancel(caller.projectId, id);
  }
}
