// Everything a part may use, built once at start by app.ts and read-only after (openServices freezes it): what
// one part hands another (the vectors part's collections, the route table) is wired in app.ts instead.
import type { Config } from '../config/index.js';
import type { Logger } from '../base/log.js';
import type { Db } from '../store/db.js';
import type { Projects } from '../auth/projects.js';
import type { UsageLedger } from '../usage/ledger.js';
import type { BlobStore } from '../store/blobs.js';
import type { ModelsService } from '../models/models-service.js';
import type { TaskModels } from '../task-models/task-models.js';
import type { GpuStatus } from '../native/gpu.js';

export interface Services {
  config: Config;
  log: Logger;
  db: Db;
  projects: Projects;
  usage: UsageLedger;
  blobs: BlobStore;
  models: ModelsService;
  /** The detectors and OCR, for every part that runs them (vision, video steps, embeddings, the add check). */
  taskModels: TaskModels;
  /** HMAC secret of presigned /v1/files links (shared by every node: env or <data-dir>/signing-secret). */
  signingSecret: string;
  /** A presigned link to a blob, valid for an hour by default. */
  presign(key: string, expiresInS?: number): string;
  version: string;
  /** The host's NVIDIA cards now (at most one reading a second, shared): the metrics and GET /admin/v1/gpus. */
  gpus(): Promise<GpuStatus>;
  /** Readiness checks beyond the database (e.g. models prepared); all must be true for /readyz. */
  readiness: Map<string, () => boolean>;
}
