// A listing read page by page (MCP tools, resources, prompts), bounded in pages and entries, so an
// upstream that pages forever or lists without end cannot hold the listing hostage.

export interface Page<T> {
  items: T[];
  nextCursor?: string | undefined;
}

/** Every page from the first until one has no `nextCursor`, at most `maxPages` pages and `maxItems` items. */
export async function collectPages<T>(page: (cursor: string | undefined) => Promise<Page<T>>, limits: { maxPages: number; maxItems?: number }): Promise<T[]> {
  const maxItems = limits.maxItems ?? Number.POSITIVE_INFINITY;
  const items: T[] = [];
  let cursor: string | undefined;
  for (let count = 0; count < limits.maxPages && items.length < maxItems; count++) {
    const result = await page(cursor);
    items.push(...result.items);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return items.length > maxItems ? items.slice(0, maxItems) : items;
}
