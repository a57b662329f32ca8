import { DomainError, type ErrorCode } from '../errors.js';

/** A cursor that is not one this API handed out. */
export class BadCursorError extends DomainError {
  readonly gatewayCode: ErrorCode = 'TG_BAD_REQUEST';
  constructor() {
    super('cursor is not one a previous page returned');
    this.name = 'BadCursorError';
  }
}

/** Where an item stands in a listing: a time (epoch ms), ties broken by id. */
export interface Position {
  at: number;
  id: string;
}

export interface Page<T> {
  items: T[];
  /** Present when more items follow: pass it as `cursor` for the next page. */
  nextCursor?: string;
}

const encode = (position: Position): string => Buffer.from(`${position.at}.${position.id}`).toString('base64url');

function decode(cursor: string): Position {
  const match = /^(\d{1,16})\.([A-Za-z0-9_-]{1,64})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new BadCursorError();
  return { at: Number(match[1]), id: match[2]! };
}

const compare = (a: Position, b: Position): number => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * One page of `items`, sorted here by position (`ascending`, or descending). The cursor names the last item
 * of the previous page by its position, not by an index, so items removed or added meanwhile neither repeat
 * nor push others off a page.
 */
export function pageOf<T>(items: readonly T[], positionOf: (item: T) => Position, order: 'ascending' | 'descending', limit: number, cursor: string | undefined): Page<T> {
  const sign = order === 'ascending' ? 1 : -1;
  const after = cursor === undefined ? undefined : decode(cursor);
  const rest = items.filter((item) => after === undefined || sign * compare(positionOf(item), after) > 0).sort((a, b) => sign * compare(positionOf(a), positionOf(b)));
  const page = rest.slice(0, limit);
  return rest.length > limit ? { items: page, nextCursor: encode(positionOf(page.at(-1)!)) } : { items: page };
}
