// The examples of the README and docs/ that tests run as written: a fenced block right after an
// `<!-- marker -->` comment.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/demo.js';

/** The ```<language> block after `<!-- marker -->` in `file` (relative to the repository); throws naming both when missing. */
export function docBlock(file: string, marker: string, language = 'bash'): string {
  const text = readFileSync(join(packageRoot(), file), 'utf8');
  const block = new RegExp(`<!-- ${marker} -->\\s*\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(text)?.[1];
  if (block === undefined) throw new Error(`${file} needs a \`\`\`${language} block after <!-- ${marker} -->`);
  return block;
}
