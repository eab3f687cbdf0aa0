// The one configuration tree: every environment variable sightflow reads, parsed once at start (loadConfig)
// into a frozen Config, one section per part. Parts receive their slice as a parameter and never read the
// environment themselves, so a bad value of any variable stops the start with one line naming it instead of
// being silently replaced later. docs/configuration.md's table lists every variable here (a unit test checks).
import { deepFreeze } from '../base/deep-freeze.js';
import { resolve } from 'node:path';
import { cpus } from 'node:os';
import { z } from 'zod';
import type { WorkerMode } from '../inference/session-pool.js';
import { requestedProviders, usesGpu } from '../inference/execution-providers.js';
import { type GpuDeviceRequest, parseGpuDevices } from '../inference/gpu-devices.js';
import { type BatchSizes, parseBatchSizes } from '../inference/dynamic-batch.js';
import { NVML_LIBRARY } from '../native/gpu.js';
import type { EngineSettings } from '../inference/native-session.js';
import { parseProviderList, PROVIDERS_HINT_PREFIX, type ProviderSpec } from './providers.js';
import { parseCidrList, type Cidr, type UrlPolicy } from '../media/url-policy.js';
import type { OtlpSettings } from '../tracing/otlp.js';

/** A configuration value that cannot be used; the message names the variable and says what it must be. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`invalid configuration: ${detail}`);
    this.name = 'ConfigError';
  }
}

type Kind = 'int' | 'number' | 'bool' | 'enum' | 'string';

/** One variable: its parser, the words of its error ("must be <expect>") and its default as the table shows it. */
interface Field {
  schema: z.ZodType;
  kind: Kind;
  expect: string;
  default?: number | boolean | string;
  /** For enums: the accepted values. */
  values?: readonly string[];
}

const int = (min: number, def?: number, max?: number): Field => {
  let n = z.coerce.number().int().min(min);
  if (max !== undefined) n = n.max(max);
  return {
    schema: def === undefined ? n.optional() : n.default(def),
    kind: 'int',
    default: def,
    expect: max === undefined ? `an integer >= ${min}` : `an integer from ${min} to ${max}`,
  };
};
const num = (min: number, def?: number): Field => {
  const n = z.coerce.number().min(min);
  return {
    schema: def === undefined ? n.optional() : n.default(def),
    kind: 'number',
    default: def,
    expect: `a number >= ${min}`,
  };
};
const bool = (def: boolean): Field => ({
  schema: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(['true', 'false', '1', '0']))
    .transform((v) => v === 'true' || v === '1')
    .default(def),
  kind: 'bool',
  default: def,
  expect: 'one of true, false, 1, 0',
});
const oneOf = <T extends string>(values: readonly [T, ...T[]], def: T): Field => ({
  schema: z.string().trim().toLowerCase().pipe(z.enum(values)).default(def),
  kind: 'enum',
  default: def,
  values,
  expect: `one of ${values.join(', ')}`,
});
const str = (def?: string): Field => ({
  schema: def === undefined ? z.string().optional() : z.string().default(def),
  kind: 'string',
  default: def,
  expect: 'a string',
});

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** Every variable, by section. SIGHTFLOW_PROVIDERS_<NAME> (one per routing hint) is read beside these. */
export const CONFIG_SECTIONS = {
  server: {
    SIGHTFLOW_PORT: int(0, 8080, 65535),
    SIGHTFLOW_HOST: str('0.0.0.0'),
    SIGHTFLOW_BODY_TIMEOUT_MS: int(0, 30_000),
    SIGHTFLOW_MAX_JSON_BYTES: int(0, 30 * 1024 * 1024),
    SIGHTFLOW_SHUTDOWN_TIMEOUT_MS: int(0, 10_000),
    SIGHTFLOW_HEAP_GROWING_PERCENT: int(0, 100, 1000),
    SIGHTFLOW_HTTP_FRONTS: int(0, 0, 64),
    UV_THREADPOOL_SIZE: int(1, 4, 1024),
  },
  store: {
    SIGHTFLOW_DATA_DIR: str('./data'),
    DATABASE_URL: str(),
    SIGHTFLOW_PG_POOL_SIZE: int(0, 10),
    SIGHTFLOW_PGLITE_TEMPLATE_DIR: str(),
    SIGHTFLOW_MODELS_DIR: str(),
  },
  auth: {
    SIGHTFLOW_ADMIN_TOKEN: str(),
    SIGHTFLOW_SIGNING_SECRET: str(),
    SIGHTFLOW_RATE_LIMIT_RPS: num(0, 0),
    SIGHTFLOW_RATE_LIMIT_BURST: num(0, 0),
    SIGHTFLOW_KEY_CACHE_MS: int(0, 2000),
  },
  log: {
    SIGHTFLOW_LOG_LEVEL: oneOf(LOG_LEVELS as unknown as readonly [string, ...string[]], 'info'),
  },
  media: {
    SIGHTFLOW_ALLOW_PRIVATE_URLS: bool(false),
    SIGHTFLOW_URL_ALLOW: str(),
    SIGHTFLOW_URL_DENY: str(),
  },
  video: {
    SIGHTFLOW_NO_WORKER: bool(false),
    SIGHTFLOW_WORKER_CONCURRENCY: int(0),
    SIGHTFLOW_VIDEO_LEASE_MS: int(200, 30_000),
    SIGHTFLOW_VIDEO_HEARTBEAT_MS: int(20),
    SIGHTFLOW_VIDEO_POLL_MS: int(10, 1000),
    SIGHTFLOW_VIDEO_REAPER_MS: int(50),
    SIGHTFLOW_VIDEO_CHECKPOINT_CHUNKS: int(1, 8),
    SIGHTFLOW_VIDEO_CHECKPOINT_MS: int(0, 250),
    SIGHTFLOW_VIDEO_SSE_HEARTBEAT_MS: int(50, 15_000),
    SIGHTFLOW_VIDEO_APPEND_GATHER_MS: int(0, 50, 1000),
    SIGHTFLOW_VIDEO_STREAM_POLL_MS: int(20, 2000),
    SIGHTFLOW_VIDEO_STREAM_BUFFER_BYTES: int(65_536, 4 * 1024 * 1024),
    SIGHTFLOW_VIDEO_STREAM_STALL_MS: int(100, 30_000),
    SIGHTFLOW_VIDEO_HWACCEL: oneOf(['none', 'auto', 'cuda'], 'none'),
    SIGHTFLOW_VIDEO_WEBHOOK_POLL_MS: int(20, 1000),
    SIGHTFLOW_VIDEO_WEBHOOK_RETRY_MS: int(10, 5000),
    SIGHTFLOW_PROVIDERS: str('local'),
    SIGHTFLOW_PROVIDER_TIMEOUT_MS: int(1, 60_000),
  },
  inference: {
    SIGHTFLOW_EXECUTION_PROVIDERS: str('cpu'),
    SIGHTFLOW_INTRA_OP_THREADS: int(1),
    SIGHTFLOW_INFERENCE_SESSIONS: int(1),
    SIGHTFLOW_INFERENCE_QUEUE_DEPTH: int(1, 32),
    SIGHTFLOW_INFERENCE_WORKERS: oneOf(['per-model', 'shared'], 'per-model'),
    SIGHTFLOW_MODEL_IDLE_UNLOAD_S: num(0, 0),
    SIGHTFLOW_BATCH_MAX_SIZE: int(1),
    SIGHTFLOW_BATCH_MAX_DELAY_MS: num(0),
    SIGHTFLOW_BATCH_SIZES: str('auto'),
    SIGHTFLOW_MODEL_WARMUP: oneOf(['auto', 'on', 'off'], 'auto'),
    SIGHTFLOW_INFERENCE_DEQUANTIZE: oneOf(['auto', 'on', 'off'], 'auto'),
    SIGHTFLOW_INFERENCE_FP16: oneOf(['auto', 'on', 'off'], 'auto'),
    SIGHTFLOW_INFERENCE_UINT8_INPUT: oneOf(['auto', 'on', 'off'], 'auto'),
    SIGHTFLOW_GPU_DEVICES: str('all'),
    SIGHTFLOW_GPU_REQUIRED: bool(false),
    SIGHTFLOW_NVML_LIBRARY: str(NVML_LIBRARY),
    SIGHTFLOW_INFERENCE_ENGINE: oneOf(['binding', 'native'], 'binding'),
    SIGHTFLOW_ORT_ENGINE_PATH: str(),
    SIGHTFLOW_TENSORRT_CACHE_DIR: str(),
    SIGHTFLOW_CUDNN_CONV_ALGO_SEARCH: oneOf(['exhaustive', 'heuristic', 'default'], 'exhaustive'),
    SIGHTFLOW_CUDA_GRAPHS: bool(false),
    CUDA_VISIBLE_DEVICES: str(),
  },
  models: {
    SIGHTFLOW_MODEL_HUB_URL: str('https://huggingface.co'),
    SIGHTFLOW_MODELS_SYNC_MS: int(100, 2000),
  },
  vlm: {
    SIGHTFLOW_VLM_URL: str(),
    SIGHTFLOW_VLM_MODEL: str(),
    SIGHTFLOW_VLM_KEY: str(),
    SIGHTFLOW_VLM_TIMEOUT_MS: int(1, 60_000),
    SIGHTFLOW_VLM_MAX_TOKENS: int(1, 512),
    SIGHTFLOW_VLM_STREAM: bool(false),
    SIGHTFLOW_VLM_FALLBACK: bool(false),
  },
  mcp: {
    SIGHTFLOW_MCP_SESSION_IDLE_MS: int(1, 10 * 60_000),
    SIGHTFLOW_MCP_MAX_SESSIONS_PER_KEY: int(1, 16),
    // The largest route body a tool reaches (index_items: up to 100 media items) is 128 MiB.
    SIGHTFLOW_MCP_MAX_BODY_BYTES: int(1024, 128 * 1024 * 1024),
    SIGHTFLOW_MCP_KEEPALIVE_MS: int(0, 15_000),
  },
  vectors: {
    SIGHTFLOW_VECTORS_OCR: bool(false),
  },
  mqtt: {
    SIGHTFLOW_MQTT_URL: str(),
    SIGHTFLOW_MQTT_TOPIC_PREFIX: str('sightflow'),
    SIGHTFLOW_MQTT_HA_DISCOVERY: bool(true),
    SIGHTFLOW_MQTT_HA_PREFIX: str('homeassistant'),
    SIGHTFLOW_MQTT_QUEUE_MESSAGES: int(1, 10_000),
  },
  native: {
    SIGHTFLOW_ADDON_PATH: str(),
  },
  metrics: {
    SIGHTFLOW_METRICS_PORT: int(0, undefined, 65535),
    SIGHTFLOW_METRICS_HOST: str(),
    SIGHTFLOW_METRICS_PROJECT_LABEL: bool(true),
  },
  // The OpenTelemetry SDK's own names, so an installation's usual settings apply unchanged.
  tracing: {
    OTEL_EXPORTER_OTLP_ENDPOINT: str(),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: str(),
    OTEL_EXPORTER_OTLP_HEADERS: str(),
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: str(),
    OTEL_SERVICE_NAME: str('sightflow'),
    OTEL_BSP_SCHEDULE_DELAY: int(0, 5000),
  },
} satisfies Record<string, Record<string, Field>>;

type Sections = typeof CONFIG_SECTIONS;
type VarName = { [S in keyof Sections]: keyof Sections[S] }[keyof Sections] & string;

/** Every variable with its parser, flattened (for the schema and for tests). */
export const CONFIG_VARIABLES: Readonly<Record<VarName, Field>> = Object.assign({}, ...Object.values(CONFIG_SECTIONS));

const EnvSchema = z.object(Object.fromEntries(Object.entries(CONFIG_VARIABLES).map(([k, f]) => [k, f.schema])));

export interface InferenceConfig {
  /** Requested ONNX Runtime providers in order (what this host lacks is skipped at start). */
  providers: string[];
  /** Intra-op threads per session; unset: the number of cores. */
  intraOpThreads?: number;
  /** Most sessions of one model that run at once (further ones load as load needs them); default by cores. */
  sessions?: number;
  /** Waiting-item bound of each model queue (also used by task-level queues such as OCR's). */
  queueDepth: number;
  /** Worker threads that own the sessions: one per model or one shared by all. */
  workers: WorkerMode;
  /** A loaded model unused for this long is unloaded (0: never); a manifest's runtime.idleUnloadS overrides it. */
  idleUnloadMs: number;
  /** Dynamic batching of detectors: most images a call and longest wait for company; unset: the provider's default. */
  batch: { maxBatch?: number; maxWaitMs?: number };
  /** The batch sizes batched models' sessions run (a batch padded up to the next): every size, a list, or (auto) by provider. */
  batchSizes: BatchSizes;
  /** Whether a model's session runs its batch sizes once on blank inputs as it loads: always, never, or (auto) on a GPU provider. */
  warmup: 'auto' | 'on' | 'off';
  /** Whether int8 graphs load as float ones: always, never, or (auto) on a GPU provider. */
  dequantize: 'auto' | 'on' | 'off';
  /** Whether detectors' graphs run in float16: always, never, or (auto) on a GPU provider. */
  fp16: 'auto' | 'on' | 'off';
  /** Whether detectors' graphs take their image as uint8 RGB and normalise it themselves: always, never, or (auto) on a GPU provider. */
  uint8Input: 'auto' | 'on' | 'off';
  /** The GPUs that sessions on a GPU provider, and the NVIDIA video decoder, use: every visible one or these ordinals. */
  gpuDevices: GpuDeviceRequest;
  /** Refuse the CPU fallback: no start without a GPU provider, and a model that cannot load on its GPU fails its runs. */
  gpuRequired: boolean;
  /** CUDA_VISIBLE_DEVICES as CUDA reads it: the devices CUDA shows the process (unset: every card). */
  cudaVisibleDevices: string | undefined;
  /** The NVIDIA driver's management library the cards' readings come from (a file name the loader finds, or a path). */
  nvmlLibrary: string;
  /** What runs the sessions: onnxruntime-node's binding, or the native engine (native/ort) with the GPU providers' options. */
  engine: EngineSettings;
}

/** Bring-your-own models: where hub references download from, and how often a node looks for added ones. */
export interface ModelsSettings {
  /** Base URL of the Hugging Face hub (owner/repo[@rev]:path references). */
  hubUrl: string;
  /** How often a server re-reads <data-dir>/manifests (and, on PostgreSQL, the shared model table). */
  syncMs: number;
}

export interface VlmConfig {
  /** The full ".../chat/completions" URL (a base ".../v1" is completed). */
  url: string;
  model: string;
  key?: string;
  timeoutMs: number;
  /** On VLM failure answer with the built-in describer instead of a 502. */
  fallback: boolean;
  /** Ask for a streamed reply. */
  stream: boolean;
  maxTokens: number;
}

export interface VideoSettings {
  /** A claimed task's lease; a worker that stops renewing it for this long is presumed dead. */
  leaseMs: number;
  /** How often a worker renews its leases (and notices a cancel between chunks). */
  heartbeatMs: number;
  /** How often an idle worker looks for pending tasks when no wake-up arrives. */
  pollMs: number;
  /** How often the reaper looks for expired leases. */
  reaperMs: number;
  /**
   * A file task stores its checkpoint with every this many chunks, or sooner once `checkpointMs` passed since
   * the last: a worker that continues the task processes the frames archived after it again (docs/video.md,
   * "What a checkpoint costs").
   */
  checkpointChunks: number;
  checkpointMs: number;
  /** An archived `: hb` comment after this long without bytes, to keep idle subscribers' connections open. */
  sseHeartbeatMs: number;
  /**
   * How long a live camera's frame chunk waits for other cameras' chunks so they are archived in one
   * statement (0: never waits); it waits no longer once every live task of the process has one waiting.
   */
  appendGatherMs: number;
  /** How long a stream subscriber waits for a wake-up before re-reading the archive anyway. */
  streamPollMs: number;
  /** Recent stream bytes a process keeps in memory per live task that has readers here. */
  streamBufferBytes: number;
  /** A live reader whose connection takes no byte for this long is cut off. */
  streamStallMs: number;
  /** The NVIDIA decoder for video tasks: none, auto or cuda (both fall back to software without a CUDA device). */
  hwaccel: 'none' | 'auto' | 'cuda';
  /** How often a process looks for webhook deliveries to queue or send. */
  webhookPollMs: number;
  /** The pause after a webhook delivery's first failed attempt; it doubles with each further one. */
  webhookRetryMs: number;
}

export interface ProvidersConfig {
  /** The default list (SIGHTFLOW_PROVIDERS). */
  default: ProviderSpec[];
  /** Lists by routing-hint variable name (SIGHTFLOW_PROVIDERS_<NAME>). */
  byHint: Record<string, ProviderSpec[]>;
  /** Time a remote provider has to deliver its first frame, unless its entry says otherwise. */
  timeoutMs: number;
}

export interface McpSettings {
  /** A session with no request for this long is closed (its streams end; its id answers 404). */
  sessionIdleMs: number;
  /** Open sessions per API key; one more is 429 (the client should end or reuse one). */
  maxSessionsPerKey: number;
  /** Largest JSON-RPC POST body; a tool's own route limit still applies to its arguments. */
  maxBodyBytes: number;
  /** SSE comment lines on idle event streams, so proxies keep them open. */
  keepAliveMs: number;
}

export interface VectorsSettings {
  /** Read text in images with PP-OCR for multimodal-embedding-v1 (off: it doubled indexing time and did not help on photos). */
  ocr: boolean;
}

export interface Config {
  // Server, store, auth and log: flat, as most parts read them.
  port: number;
  host: string;
  dataDir: string;
  /** Prepared models; default <dataDir>/models. */
  modelsDir: string;
  databaseUrl?: string;
  /** Where templates of an empty embedded database are kept (a new one then skips initdb); unset: none. */
  pgliteTemplateDir?: string;
  /** SIGHTFLOW_ADMIN_TOKEN as set. The token in effect (this, or `serve`'s <dataDir>/admin-token) is App.adminToken. */
  adminToken?: string;
  /** URL inputs may reach loopback/private addresses (the media URL policy). */
  allowPrivateUrls: boolean;
  /** The one URL policy of image, audio and video URLs, webhooks included: allowPrivateUrls plus the
   * SIGHTFLOW_URL_ALLOW and SIGHTFLOW_URL_DENY blocks. */
  urlPolicy: UrlPolicy;
  logLevel: string;
  signingSecret?: string;
  rateLimit: { rps: number; burst: number };
  keyCacheMs: number;
  bodyTimeoutMs: number;
  maxJsonBytes: number;
  /**
   * Front processes answering HTTP on the port (0: `serve` answers it itself): they take the image routes'
   * HTTP, body and reply off the event loop of the process that runs the models (src/front.ts, src/http/fronts/).
   */
  httpFronts: number;
  /**
   * Threads of libuv's pool, where each request's image work runs (JPEG decode, the detector's letterbox, colour
   * names): UV_THREADPOOL_SIZE as libuv read it, which the `sightflow` launcher (bin/sightflow.cjs) sets to one
   * a core (at least 4) unless given; libuv's 4 when the CLI is started without it.
   */
  imageThreads: number;
  pgPoolSize: number;
  shutdownTimeoutMs: number;
  /** V8's old-generation growing factor, as (1 + percent / 100); 0 leaves V8's own (src/base/heap-tuning.ts). */
  heapGrowingPercent: number;
  workerConcurrency: number;
  /** Run video workers inside `serve` (off with --no-worker / SIGHTFLOW_NO_WORKER=true). */
  inProcessWorker: boolean;
  video: VideoSettings;
  providers: ProvidersConfig;
  inference: InferenceConfig;
  models: ModelsSettings;
  /** Null when SIGHTFLOW_VLM_URL is unset (describe uses the built-in describer). */
  vlm: VlmConfig | null;
  mcp: McpSettings;
  vectors: VectorsSettings;
  /** The native addon file. */
  /** addonPath: a built addon elsewhere than the default build/Release (src/native/load.ts owns the default). */
  native: { addonPath?: string };
  metrics: MetricsSettings;
  /** MQTT publishing of tasks that ask for it (docs/mqtt.md); null when SIGHTFLOW_MQTT_URL is unset. */
  mqtt: MqttSettings | null;
  /** Span export over OTLP; null when no endpoint is set (the OpenTelemetry packages are then never loaded). */
  otlp: OtlpSettings | null;
}

export interface MetricsSettings {
  /** Port of the Prometheus endpoint (GET /metrics, no credential); unset: no metrics are kept or served. */
  port?: number;
  /** Its listen address (default: the API's host). */
  host: string;
  /** Usage counters carry the project id as a label (off for installations with very many projects). */
  projectLabel: boolean;
}

export interface MqttSettings {
  /** The broker, mqtt:// or mqtts://, without its credentials and client id. */
  url: string;
  username?: string;
  password?: string;
  /** The `client_id` query parameter of SIGHTFLOW_MQTT_URL; unset: one is made per process. */
  clientId?: string;
  /** First level of every topic sightflow publishes. */
  topicPrefix: string;
  /** Publish Home Assistant discovery configs (and republish them when Home Assistant comes online). */
  haDiscovery: boolean;
  /** Home Assistant's discovery prefix (its status topic is `<prefix>/status`). */
  haPrefix: string;
  /** Messages kept while the broker cannot be reached; past it the oldest are dropped (and counted). */
  queueMessages: number;
}

export interface CliFlags {
  port?: number;
  host?: string;
  dataDir?: string;
  noWorker?: boolean;
}

/** Blank values count as unset, as they always have for the string variables. */
/**
 * Sessions of one model that may run at once when the operator sets none. Below 4 cores, one per core with
 * one thread each: on 2 cores two 1-thread sessions made more images/s than one 2-thread session (bench
 * serve, detect and a YOLO export). From 4 cores, half the cores (at most 8): on a 16-core host 8 sessions
 * of the built-in detector made several times the images/s of one (docs/capacity.md, "Sessions by cores").
 * They load only while runs overlap; a run alone takes a first, wide session with every thread, so one
 * client's latency is that of a full session.
 */
export function defaultInferenceSessions(cores: number): number {
  return cores < 4 ? Math.max(1, cores) : Math.min(8, Math.floor(cores / 2));
}

function withoutBlanks(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v.trim() !== '') out[k] = v;
  return out;
}

function httpUrl(text: string, variable: string): URL {
  let u: URL | null = null;
  try {
    u = new URL(text);
  } catch {
    /* reported below */
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:'))
    throw new ConfigError(variable, `${variable} must be an http(s) URL (got ${JSON.stringify(text)})`);
  return u;
}

function chatCompletionsUrl(base: string): string {
  const u = httpUrl(base, 'SIGHTFLOW_VLM_URL');
  if (!/\/chat\/completions\/?$/.test(u.pathname)) u.pathname = `${u.pathname.replace(/\/$/, '')}/chat/completions`;
  return u.toString();
}

/**
 * Where spans go: the traces endpoint as it is, else the base endpoint with the signal's path `/v1/traces`
 * appended (the OpenTelemetry exporter convention); null when neither is set.
 */
function otlpTracesUrl(traces: string | undefined, base: string | undefined): string | null {
  if (traces?.trim()) return httpUrl(traces.trim(), 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT').toString();
  if (!base?.trim()) return null;
  const u = httpUrl(base.trim(), 'OTEL_EXPORTER_OTLP_ENDPOINT');
  u.pathname = `${u.pathname.replace(/\/$/, '')}/v1/traces`;
  return u.toString();
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `name=value,name2=value2` with percent-encoded values, as the OpenTelemetry exporters read them. */
function otlpHeaders(text: string | undefined, variable: string, into: Record<string, string>): Record<string, string> {
  const entries = (text ?? '').split(',');
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (!entry.trim()) continue;
    const eq = entry.indexOf('=');
    const name = eq < 0 ? '' : entry.slice(0, eq).trim();
    let value: string | null = null;
    try {
      value = decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      /* reported below */
    }
    // The values are often credentials: the message names the entry's position, never its text.
    if (!HEADER_NAME.test(name) || value === null) {
      throw new ConfigError(
        variable,
        `${variable} must be comma-separated name=value pairs with percent-encoded values (entry ${i + 1} is not)`,
      );
    }
    into[name] = value;
  }
  return into;
}

/** A topic level path that is publishable: no wildcards, no empty level, not a `$` system topic. */
function topicPath(text: string, variable: string): string {
  const t = text.trim();
  if (!t || /[+#\u0000]/.test(t) || t.split('/').some((l) => l === '') || t.startsWith('$')) {
    throw new ConfigError(
      variable,
      `${variable} must be MQTT topic levels separated by / without wildcards, empty levels or a leading $ (got ${JSON.stringify(text)})`,
    );
  }
  return t;
}

function mqttSettings(e: Record<string, any>): MqttSettings | null {
  const prefix = topicPath(e.SIGHTFLOW_MQTT_TOPIC_PREFIX, 'SIGHTFLOW_MQTT_TOPIC_PREFIX');
  const haPrefix = topicPath(e.SIGHTFLOW_MQTT_HA_PREFIX, 'SIGHTFLOW_MQTT_HA_PREFIX');
  const text = (e.SIGHTFLOW_MQTT_URL as string | undefined)?.trim();
  if (!text) return null;
  let u: URL | null = null;
  try {
    u = new URL(text);
  } catch {
    /* reported below */
  }
  // The URL may carry a password: the message never repeats it.
  if (!u || (u.protocol !== 'mqtt:' && u.protocol !== 'mqtts:') || !u.hostname) {
    throw new ConfigError(
      'SIGHTFLOW_MQTT_URL',
      'SIGHTFLOW_MQTT_URL must be an mqtt:// or mqtts:// URL with a host ([user[:password]@]host[:port][?client_id=...])',
    );
  }
  const username = u.username ? decodeURIComponent(u.username) : undefined;
  const password = u.password ? decodeURIComponent(u.password) : undefined;
  const clientId = u.searchParams.get('client_id')?.trim() || undefined;
  return {
    url: `${u.protocol}//${u.host}`,
    username,
    password,
    clientId,
    topicPrefix: prefix,
    haDiscovery: e.SIGHTFLOW_MQTT_HA_DISCOVERY,
    haPrefix,
    queueMessages: e.SIGHTFLOW_MQTT_QUEUE_MESSAGES,
  };
}

function batchSizes(text: string): BatchSizes {
  try {
    return parseBatchSizes(text);
  } catch (e) {
    throw new ConfigError(
      'SIGHTFLOW_BATCH_SIZES',
      `SIGHTFLOW_BATCH_SIZES must be "auto", "all" or a comma-separated list of batch sizes (1,4,16): ${(e as Error).message}`,
    );
  }
}

function gpuDevices(text: string): GpuDeviceRequest {
  try {
    return parseGpuDevices(text);
  } catch (e) {
    throw new ConfigError(
      'SIGHTFLOW_GPU_DEVICES',
      `SIGHTFLOW_GPU_DEVICES must be "all" or a comma-separated list of GPU ordinals (0,1): ${(e as Error).message}`,
    );
  }
}

function cidrs(text: string | undefined, variable: string): Cidr[] {
  try {
    return parseCidrList(text);
  } catch (e) {
    throw new ConfigError(
      variable,
      `${variable} must be a comma-separated list of CIDR blocks: ${(e as Error).message}`,
    );
  }
}

function providerList(text: string, variable: string): ProviderSpec[] {
  try {
    return parseProviderList(text, variable);
  } catch (e) {
    throw new ConfigError(variable, (e as Error).message);
  }
}

function otlpSettings(e: Record<string, any>): OtlpSettings | null {
  // Headers first: a bad list stops the start even while no endpoint is set.
  const headers = otlpHeaders(e.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS', {});
  otlpHeaders(e.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', headers);
  const url = otlpTracesUrl(e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, e.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (!url) return null;
  return {
    url,
    headers,
    serviceName: (e.OTEL_SERVICE_NAME as string).trim() || 'sightflow',
    scheduleDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
  };
}

/** loadConfig of this process's environment: the CLI's one read of it. */
export function loadProcessConfig(flags: CliFlags = {}): Config {
  return loadConfig(process.env, flags);
}

/**
 * Parses `env` (the process environment at start, or a test's object) and `flags` into the frozen tree.
 * Flags win over environment variables, which win over defaults. Throws ConfigError naming the first bad
 * variables.
 */
export function loadConfig(env: Record<string, string | undefined>, flags: CliFlags = {}): Config {
  const raw = withoutBlanks(env);
  const parsed = EnvSchema.safeParse(raw);
  if (!parsed.success) {
    const names = [...new Set(parsed.error.issues.map((i) => String(i.path[0])))];
    const detail = names
      .map((n) => `${n} must be ${CONFIG_VARIABLES[n as VarName]?.expect ?? 'valid'} (got ${JSON.stringify(raw[n])})`)
      .join('; ');
    throw new ConfigError(names[0]!, detail);
  }
  const e = parsed.data as { [K in VarName]: any };

  const vlmUrl = (e.SIGHTFLOW_VLM_URL as string | undefined)?.trim();
  const vlmModel = (e.SIGHTFLOW_VLM_MODEL as string | undefined)?.trim();
  if (vlmUrl && !vlmModel)
    throw new ConfigError(
      'SIGHTFLOW_VLM_MODEL',
      'SIGHTFLOW_VLM_URL is set but SIGHTFLOW_VLM_MODEL is not; name the model the endpoint serves',
    );

  const byHint: Record<string, ProviderSpec[]> = {};
  // Every list is parsed now, so a typo fails at start rather than on the first task that uses the hint.
  for (const [k, v] of Object.entries(raw)) if (k.startsWith(PROVIDERS_HINT_PREFIX)) byHint[k] = providerList(v, k);

  if (e.SIGHTFLOW_GPU_REQUIRED && !usesGpu(requestedProviders(e.SIGHTFLOW_EXECUTION_PROVIDERS)))
    throw new ConfigError(
      'SIGHTFLOW_GPU_REQUIRED',
      `SIGHTFLOW_GPU_REQUIRED is set but SIGHTFLOW_EXECUTION_PROVIDERS (${JSON.stringify(e.SIGHTFLOW_EXECUTION_PROVIDERS)}) names no GPU provider; add cuda or tensorrt`,
    );

  const leaseMs: number = e.SIGHTFLOW_VIDEO_LEASE_MS;
  const dataDir = flags.dataDir ?? e.SIGHTFLOW_DATA_DIR;
  return deepFreeze<Config>({
    port: flags.port ?? e.SIGHTFLOW_PORT,
    host: flags.host ?? e.SIGHTFLOW_HOST,
    dataDir: resolve(dataDir),
    modelsDir: resolve(e.SIGHTFLOW_MODELS_DIR ?? resolve(dataDir, 'models')),
    databaseUrl: e.DATABASE_URL,
    pgliteTemplateDir: e.SIGHTFLOW_PGLITE_TEMPLATE_DIR ? resolve(e.SIGHTFLOW_PGLITE_TEMPLATE_DIR) : undefined,
    adminToken: e.SIGHTFLOW_ADMIN_TOKEN,
    allowPrivateUrls: e.SIGHTFLOW_ALLOW_PRIVATE_URLS,
    urlPolicy: {
      allowPrivate: e.SIGHTFLOW_ALLOW_PRIVATE_URLS,
      allow: cidrs(e.SIGHTFLOW_URL_ALLOW, 'SIGHTFLOW_URL_ALLOW'),
      deny: cidrs(e.SIGHTFLOW_URL_DENY, 'SIGHTFLOW_URL_DENY'),
    },
    logLevel: e.SIGHTFLOW_LOG_LEVEL,
    signingSecret: e.SIGHTFLOW_SIGNING_SECRET,
    rateLimit: { rps: e.SIGHTFLOW_RATE_LIMIT_RPS, burst: e.SIGHTFLOW_RATE_LIMIT_BURST || e.SIGHTFLOW_RATE_LIMIT_RPS },
    keyCacheMs: e.SIGHTFLOW_KEY_CACHE_MS,
    bodyTimeoutMs: e.SIGHTFLOW_BODY_TIMEOUT_MS,
    maxJsonBytes: e.SIGHTFLOW_MAX_JSON_BYTES,
    httpFronts: e.SIGHTFLOW_HTTP_FRONTS,
    imageThreads: e.UV_THREADPOOL_SIZE,
    pgPoolSize: e.SIGHTFLOW_PG_POOL_SIZE,
    shutdownTimeoutMs: e.SIGHTFLOW_SHUTDOWN_TIMEOUT_MS,
    heapGrowingPercent: e.SIGHTFLOW_HEAP_GROWING_PERCENT,
    workerConcurrency: e.SIGHTFLOW_WORKER_CONCURRENCY ?? Math.max(1, Math.floor(cpus().length / 2)),
    inProcessWorker: !(flags.noWorker ?? e.SIGHTFLOW_NO_WORKER),
    video: {
      leaseMs,
      heartbeatMs: e.SIGHTFLOW_VIDEO_HEARTBEAT_MS ?? Math.max(50, Math.floor(leaseMs / 3)),
      pollMs: e.SIGHTFLOW_VIDEO_POLL_MS,
      reaperMs: e.SIGHTFLOW_VIDEO_REAPER_MS ?? Math.min(5000, leaseMs),
      checkpointChunks: e.SIGHTFLOW_VIDEO_CHECKPOINT_CHUNKS,
      checkpointMs: e.SIGHTFLOW_VIDEO_CHECKPOINT_MS,
      sseHeartbeatMs: e.SIGHTFLOW_VIDEO_SSE_HEARTBEAT_MS,
      appendGatherMs: e.SIGHTFLOW_VIDEO_APPEND_GATHER_MS,
      streamPollMs: e.SIGHTFLOW_VIDEO_STREAM_POLL_MS,
      streamBufferBytes: e.SIGHTFLOW_VIDEO_STREAM_BUFFER_BYTES,
      streamStallMs: e.SIGHTFLOW_VIDEO_STREAM_STALL_MS,
      hwaccel: e.SIGHTFLOW_VIDEO_HWACCEL,
      webhookPollMs: e.SIGHTFLOW_VIDEO_WEBHOOK_POLL_MS,
      webhookRetryMs: e.SIGHTFLOW_VIDEO_WEBHOOK_RETRY_MS,
    },
    providers: {
      default: providerList(e.SIGHTFLOW_PROVIDERS, 'SIGHTFLOW_PROVIDERS'),
      byHint,
      timeoutMs: e.SIGHTFLOW_PROVIDER_TIMEOUT_MS,
    },
    inference: {
      providers: requestedProviders(e.SIGHTFLOW_EXECUTION_PROVIDERS),
      intraOpThreads: e.SIGHTFLOW_INTRA_OP_THREADS,
      sessions: e.SIGHTFLOW_INFERENCE_SESSIONS ?? defaultInferenceSessions(cpus().length),
      queueDepth: e.SIGHTFLOW_INFERENCE_QUEUE_DEPTH,
      workers: e.SIGHTFLOW_INFERENCE_WORKERS,
      idleUnloadMs: Math.round(e.SIGHTFLOW_MODEL_IDLE_UNLOAD_S * 1000),
      batch: { maxBatch: e.SIGHTFLOW_BATCH_MAX_SIZE, maxWaitMs: e.SIGHTFLOW_BATCH_MAX_DELAY_MS },
      batchSizes: batchSizes(e.SIGHTFLOW_BATCH_SIZES),
      warmup: e.SIGHTFLOW_MODEL_WARMUP,
      dequantize: e.SIGHTFLOW_INFERENCE_DEQUANTIZE,
      fp16: e.SIGHTFLOW_INFERENCE_FP16,
      uint8Input: e.SIGHTFLOW_INFERENCE_UINT8_INPUT,
      gpuDevices: gpuDevices(e.SIGHTFLOW_GPU_DEVICES),
      gpuRequired: e.SIGHTFLOW_GPU_REQUIRED,
      // Kept as given, blank too: an empty value hides every device from CUDA.
      cudaVisibleDevices: env.CUDA_VISIBLE_DEVICES,
      nvmlLibrary: e.SIGHTFLOW_NVML_LIBRARY,
      engine: {
        kind: e.SIGHTFLOW_INFERENCE_ENGINE,
        path: (e.SIGHTFLOW_ORT_ENGINE_PATH as string | undefined)?.trim() || undefined,
        // Set blank, no cache; unset, one in the data dir (engines are per card and TensorRT version: it checks).
        tensorrtCacheDir:
          e.SIGHTFLOW_TENSORRT_CACHE_DIR === undefined
            ? resolve(dataDir, 'tensorrt-cache')
            : (e.SIGHTFLOW_TENSORRT_CACHE_DIR as string).trim() && resolve(e.SIGHTFLOW_TENSORRT_CACHE_DIR.trim()),
        cudnnSearch: e.SIGHTFLOW_CUDNN_CONV_ALGO_SEARCH,
        cudaGraph: e.SIGHTFLOW_CUDA_GRAPHS,
      },
    },
    models: { hubUrl: e.SIGHTFLOW_MODEL_HUB_URL, syncMs: e.SIGHTFLOW_MODELS_SYNC_MS },
    vlm: vlmUrl
      ? {
          url: chatCompletionsUrl(vlmUrl),
          model: vlmModel!,
          key: (e.SIGHTFLOW_VLM_KEY as string | undefined)?.trim() || undefined,
          timeoutMs: e.SIGHTFLOW_VLM_TIMEOUT_MS,
          fallback: e.SIGHTFLOW_VLM_FALLBACK,
          stream: e.SIGHTFLOW_VLM_STREAM,
          maxTokens: e.SIGHTFLOW_VLM_MAX_TOKENS,
        }
      : null,
    mcp: {
      sessionIdleMs: e.SIGHTFLOW_MCP_SESSION_IDLE_MS,
      maxSessionsPerKey: e.SIGHTFLOW_MCP_MAX_SESSIONS_PER_KEY,
      maxBodyBytes: e.SIGHTFLOW_MCP_MAX_BODY_BYTES,
      keepAliveMs: e.SIGHTFLOW_MCP_KEEPALIVE_MS,
    },
    vectors: { ocr: e.SIGHTFLOW_VECTORS_OCR },
    native: { addonPath: e.SIGHTFLOW_ADDON_PATH },
    metrics: {
      port: e.SIGHTFLOW_METRICS_PORT,
      host: (e.SIGHTFLOW_METRICS_HOST as string | undefined)?.trim() || (flags.host ?? e.SIGHTFLOW_HOST),
      projectLabel: e.SIGHTFLOW_METRICS_PROJECT_LABEL,
    },
    mqtt: mqttSettings(e),
    otlp: otlpSettings(e),
  });
}
