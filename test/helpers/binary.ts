import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The absolute path of a command on PATH, or undefined when it is not installed. */
export async function findBinary(name: string): Promise<string | undefined> {
  try {
    const { stdout } = await run('sh', ['-c', 'command -v "$1"', 'sh', name]);
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}
