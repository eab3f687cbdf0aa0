// The failover bench's statements: which worker holds a task's lease now (`host:pid:random`, the worker's
// owner string; NULL while the task waits for a worker), so the bench kills the holder and no other, and how
// far behind the archive the task's checkpoint is when it does.
export const sql = {
  leaseOwner: `SELECT lease_owner FROM video_tasks WHERE id = $1`,
  /** Frame chunks archived after the one the task's stored checkpoint is of: what a taker processes again. */
  behindCheckpoint: `SELECT chunk_count - (checkpoint::jsonb ->> 'frames')::int AS behind FROM video_tasks WHERE id = $1`,
};
