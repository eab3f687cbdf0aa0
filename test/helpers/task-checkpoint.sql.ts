// What the resume tests read of a task's row: how many chunks it archived and which chunk its stored
// checkpoint is of, so a test can kill a worker where the next one must process frames again.
export const sql = {
  checkpointAt: `SELECT chunk_count, (checkpoint::jsonb ->> 'frames')::int AS frames FROM video_tasks WHERE id = $1`,
};
