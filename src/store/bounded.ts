/** `work`'s outcome, or `onTimeout`'s once `ms` pass first; the timer never outlives the race. */
export function bounded<T>(work: Promise<T>, ms: number, onTimeout: () => T | Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve, reject) => (timer = setTimeout(() => Promise.resolve().then(onTimeout).then(resolve, reject), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
