/**
 * `promise`, or a rejection with `timedOut()` once `ms` have passed; the timer never outlives
 * the wait. The runtimes' calls that must not hang: the Docker engine's ping, a holder's start
 * and answer.
 */
export async function withDeadline<T>(
  promise: Promise<T>,
  ms: number,
  timedOut: () => Error,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(timedOut());
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
