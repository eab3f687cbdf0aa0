// What the resume tests and the failover bench read of a task's row: how many chunks it archived and how many
// of them came after the chunk its stored checkpoint is of (what the next worker processes again; null while
// it has none), so a test can kill a worker where the next one must process frames again.
export const sql = {
  behindCheckpoint: `SELECT chunk_count, chunk_count - (checkpoint::jsonb ->> 'frames')::int AS behind
                     FROM video_tasks WHERE id = $1`,
};
