// Re-rendering on every stream chunk would redraw faster than the screen can show: a chunk asks for a
// redraw, and the redraw happens at most once per animation frame.

/** Calls `fn` at most once per animation frame however often bump() is called; cancel() drops a pending call. */
export function perAnimationFrame(fn: () => void): { bump(): void; cancel(): void } {
  let scheduled = 0;
  return {
    bump: () => {
      if (!scheduled)
        scheduled = requestAnimationFrame(() => {
          scheduled = 0;
          fn();
        });
    },
    cancel: () => {
      if (scheduled) cancelAnimationFrame(scheduled);
      scheduled = 0;
    },
  };
}
