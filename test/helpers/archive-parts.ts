// A video task's archived frame chunks split where a worker took over: the chunk that carries
// stream_info.gap_ms starts a part. Shared by the resume tests (test/helpers/video-resume.ts) and the failover
// bench's checks (bench/failover-checks.ts), which judge the same archives.

/** The frame chunks in parts, one more part than the gaps marked. */
export function partsAtGaps<C extends { stream_info: { gap_ms?: number } }>(frames: readonly C[]): C[][] {
  const out: C[][] = [[]];
  for (const c of frames) {
    if (c.stream_info.gap_ms !== undefined) out.push([]);
    out.at(-1)!.push(c);
  }
  return out;
}
