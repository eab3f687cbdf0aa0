// What the GPU check's report says of a step that failed as a whole: its error from the step's stderr. An
// uncaught error prints where it was thrown, the message, then its stack and Node's version, so the last lines
// alone (which the report kept before) were stack frames and never the reason.

/** The error message in a failed step's stderr and where it was thrown (its first stack frame); else its last lines. */
export function stepFailure(stderr: string): string {
  const lines = stderr.split('\n').filter((l) => l.trim() !== '');
  const isFrame = (l: string) => /^\s+at\s/.test(l);
  // The last message line: an error's name and text (`Error: ...`, `TypeError [CODE]: ...`), not a frame.
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!;
    if (isFrame(l) || !/^\s*(Uncaught\s+)?[A-Za-z]*(Error|Exception)\b[^:]*:/.test(l)) continue;
    const frame = lines[i + 1] && isFrame(lines[i + 1]!) ? lines[i + 1]!.trim() : undefined;
    return frame ? `${l.trim()} (${frame})` : l.trim();
  }
  return lines.slice(-3).join(' | ') || 'failed with nothing on stderr';
}
