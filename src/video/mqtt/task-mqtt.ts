// The worker's side of a task that asked for `publish.mqtt` (docs/mqtt.md, "A task that publishes"): opened
// when the worker starts the task, told of each chunk right after it is archived and of the task's ending,
// closed when the task is over. It finds what the camera publisher needs where the worker has it: a chunk's
// stream offset from the archive's own append notices (the hub tells this process of every append, with
// its start, before the append returns), and the analytics rules in effect from the analytics step's run.
import type { LiveSteps } from '../pipeline/worker-step.js';
import type { StreamHub } from '../stream/stream-hub.js';
import type { FrameOutput, VideoTaskRequest } from '../task-contract.js';
import { TaskAnalytics } from '../analytics/task-analytics.js';
import { CameraPublisher } from './camera-publisher.js';
import type { MqttPublisher } from './mqtt-publisher.js';

export interface TaskMqttContext {
  taskId: string;
  request: VideoTaskRequest;
  hub: StreamHub;
  live: LiveSteps;
  /** sightflow's version (Home Assistant's device). */
  version: string;
}

export class TaskMqtt {
  readonly #cam: CameraPublisher;
  readonly #off: () => void;
  /** Where the task's latest append started and ended (frame chunks and heartbeat comments alike). */
  #from = 0;
  #end = 0;

  private constructor(pub: MqttPublisher, camera: string, ctx: TaskMqttContext) {
    this.#off = ctx.hub.onAppend((taskId, _end, appended) => {
      if (taskId !== ctx.taskId || !appended) return;
      this.#from = appended.from;
      this.#end = appended.from + appended.bytes.length;
    });
    this.#cam = new CameraPublisher(pub, {
      taskId: ctx.taskId,
      camera,
      version: ctx.version,
      rules: () => {
        const run = ctx.live.get(ctx.taskId, 'analytics');
        return run instanceof TaskAnalytics ? { params: run.engine.parameters, version: run.engine.version } : null;
      },
    });
  }

  /** The task's publishing, when it asked for it and this process has a broker; else null. */
  static open(pub: MqttPublisher | null, ctx: TaskMqttContext): TaskMqtt | null {
    const camera = ctx.request.publish?.mqtt?.camera;
    return pub && camera ? new TaskMqtt(pub, camera, ctx) : null;
  }

  /** Right after a frame's chunk was appended (before anything else is appended to the task). */
  archived(frame: FrameOutput): void {
    this.#cam.frame(frame, { offset: this.#from });
  }

  /** The task succeeded: the terminal chunk's fields (its closing events go where that chunk will start). */
  finish(chunk: Record<string, unknown> | undefined): void {
    this.#cam.finish(chunk, { offset: this.#end });
  }

  close(): void {
    this.#off();
    this.#cam.close();
  }
}
