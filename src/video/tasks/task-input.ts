// A posted task's input made ready for the queue, before the task exists: a video_url is checked against the
// URL policy (the worker checks again before FFmpeg opens it), a video_base64 upload is decoded and staged to
// the blob store (so no worker can claim a task whose input is not there yet). Gives the job the worker runs
// (defaults filled in, the data replaced by where it is) and the request as the API echoes it.
import { errors } from '../../base/errors.js';
import { decodeBase64 } from '../../media/base64.js';
import { checkUrl, urlDenied } from '../../media/url-policy.js';
import type { Services } from '../../services/services.js';
import type { VideoTaskRequest } from '../task-contract.js';
import { type ProcessBody } from '../schemas.js';
import { DEFAULT_MAX_FRAMES, DEFAULT_SAMPLING, VIDEO_BASE64_MAX_BYTES, VIDEO_URL_SCHEMES } from '../task-contract.js';
import type { NewTask } from './task-store.js';
import type { TaskJob } from '../task-contract.js';

/** Where a task's uploaded video is staged (kept with the task: the record links to it, input_url). */
export function stagedInputKey(projectId: string, taskId: string): string {
  return `video-inputs/${projectId}/${taskId}`;
}

/** `webhook`: checked, with its secret decided (webhooks.ts); only its url is echoed. */
export async function stageInput(
  s: Pick<Services, 'config' | 'blobs'>,
  task: { id: string; projectId: string; keyId: string | null },
  posted: ProcessBody,
  webhook?: { url: string },
): Promise<NewTask> {
  const { id, projectId } = task;
  const { webhook: _webhook, ...body } = posted;
  const el = body.input[0]!;
  const echo = structuredClone(body) as unknown as { input: Array<Record<string, unknown>>; webhook?: { url: string } };
  if (webhook) echo.webhook = { url: webhook.url };
  const source: TaskJob['source'] = {};
  if (el.type === 'video_url') {
    const verdict = await checkUrl(el.url!, s.config.urlPolicy, undefined, { schemes: VIDEO_URL_SCHEMES });
    if (!verdict.allowed) throw urlDenied(verdict, 'input[0].url', 'video');
    source.url = el.url;
  } else {
    const bytes = decodeBase64(el.data, 'input[0].data', Number.MAX_SAFE_INTEGER, 'video');
    if (bytes.length > VIDEO_BASE64_MAX_BYTES) throw errors.payloadTooLarge('video', VIDEO_BASE64_MAX_BYTES);
    const key = stagedInputKey(projectId, id);
    await s.blobs.put(key, bytes, 'application/octet-stream');
    source.blob_key = key;
    echo.input[0]!.data = { elided: true, bytes: bytes.length };
  }
  const { data: _data, ...rest } = el;
  const request: VideoTaskRequest = {
    ...body,
    input: [
      { ...rest, sampling: el.sampling ?? { ...DEFAULT_SAMPLING }, max_frames: el.max_frames ?? DEFAULT_MAX_FRAMES },
    ],
  };
  return { ...task, job: { request, source }, echo };
}
