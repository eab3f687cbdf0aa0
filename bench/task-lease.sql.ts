// The failover bench's one statement: which worker holds a task's lease now (`host:pid:random`, the worker's
// owner string; NULL while the task waits for a worker), so the bench kills the holder and no other.
export const sql = {
  leaseOwner: `SELECT lease_owner FROM video_tasks WHERE id = $1`,
};
