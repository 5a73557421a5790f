// A reporter for Node's test runner, beside `spec`: at the end, for each test file that failed
// as a whole (its process exited with a code or a signal although its tests may all have passed:
// an error after the last test, a crash), its exit and the last lines it wrote to standard error.
// `spec` shows that output in the middle of a long run only, where a CI log cut to its end
// loses it.
const TAIL_LINES = 60;

export default async function* failedFilesReporter(source) {
  /** The standard error of each file, its last TAIL_LINES lines. */
  const stderr = new Map();
  const failed = [];
  for await (const event of source) {
    if (event.type === 'test:stderr') {
      const { file, message } = event.data;
      if (file === undefined) continue;
      const lines = stderr.get(file) ?? [];
      lines.push(...String(message).split('\n'));
      stderr.set(file, lines.slice(-TAIL_LINES));
    } else if (event.type === 'test:fail' && event.data.nesting === 0) {
      const { file, name, details } = event.data;
      const error = details?.error;
      failed.push({
        file: file ?? name,
        exitCode: error?.exitCode ?? null,
        signal: error?.signal ?? null,
      });
    }
  }
  for (const { file, exitCode, signal } of failed) {
    yield `\n✖ ${file}: exit code ${exitCode ?? 'none'}, signal ${signal ?? 'none'}; its last standard error:\n`;
    const lines = stderr.get(file) ?? [];
    yield lines.length > 0 ? `${lines.map((line) => `  | ${line}`).join('\n')}\n` : '  (nothing)\n';
  }
}
