// Video worker timings, from the environment (README "Configuration"). Tests shorten the lease to see crashes
// handled within seconds.
export interface VideoSettings {
  /** A claimed task's lease; a worker that stops renewing it for this long is presumed dead. */
  leaseMs: number;
  /** How often a worker renews its leases (and notices a cancel between chunks). */
  heartbeatMs: number;
  /** How often an idle worker looks for pending tasks when no wake-up arrives. */
  pollMs: number;
  /** How often the reaper looks for expired leases. */
  reaperMs: number;
  /** An archived `: hb` comment after this long without bytes, to keep idle subscribers' connections open. */
  sseHeartbeatMs: number;
  /** How long a stream subscriber waits for a wake-up before re-reading the archive anyway. */
  streamPollMs: number;
}

const num = (v: string | undefined, def: number, min: number): number => {
  const n = v === undefined || v === '' ? def : Number(v);
  return Number.isFinite(n) && n >= min ? n : def;
};

export function videoSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): VideoSettings {
  const leaseMs = num(env.SIGHTFLOW_VIDEO_LEASE_MS, 30_000, 200);
  return {
    leaseMs,
    heartbeatMs: num(env.SIGHTFLOW_VIDEO_HEARTBEAT_MS, Math.max(50, Math.floor(leaseMs / 3)), 20),
    pollMs: num(env.SIGHTFLOW_VIDEO_POLL_MS, 1000, 10),
    reaperMs: num(env.SIGHTFLOW_VIDEO_REAPER_MS, Math.min(5000, leaseMs), 50),
    sseHeartbeatMs: num(env.SIGHTFLOW_VIDEO_SSE_HEARTBEAT_MS, 15_000, 50),
    streamPollMs: num(env.SIGHTFLOW_VIDEO_STREAM_POLL_MS, 2000, 20),
  };
}
