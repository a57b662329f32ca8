import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * Calls `onChange` after the config file changes, debounced: editors write files in several steps
 * (truncate, write, rename), and one reload per save is enough. Watches the folder so an atomic
 * rename-over-the-file is seen too.
 */
export function watchConfigFile(path: string, onChange: () => void, debounceMs = 250): () => void {
  let timer: NodeJS.Timeout | undefined;
  const watcher: FSWatcher = watch(dirname(path), { persistent: false }, (_event, file) => {
    if (file !== null && file !== basename(path)) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  });
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}
