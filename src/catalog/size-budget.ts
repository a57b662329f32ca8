// Bounds a resource read or a prompt like a tool's output (docs/architecture.md#resources-and-prompts): text is
// cut and marked as `output` is, a blob or image that no longer fits is replaced by a line saying so.
import { truncateOutput } from '../call/tool-result.js';

export class SizeBudget {
  truncated = false;
  private remaining: number;

  constructor(limit: number) {
    this.remaining = limit;
  }

  /** The text, cut to what is left of the budget. */
  text(text: string): string {
    if (text.length <= this.remaining) {
      this.remaining -= text.length;
      return text;
    }
    const cut = truncateOutput(text, this.remaining);
    this.remaining = 0;
    this.truncated = true;
    return cut.output;
  }

  /** Whether base64 data of this length still fits (and spends it when it does). */
  fits(data: string): boolean {
    if (data.length > this.remaining) {
      this.truncated = true;
      return false;
    }
    this.remaining -= data.length;
    return true;
  }
}

export const omitted = (what: string, mimeType: string | undefined, chars: number): string =>
  `[${what}${mimeType ? ` ${mimeType}` : ''} of ${chars} base64 chars omitted: over the size limit]`;
