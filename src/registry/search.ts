import type { Tool } from '../types.js';
import type { Pool } from './pool.js';

const tokenize = (text: string): string[] => text.toLowerCase().split(/[^a-z0-9]+/).filter((token) => token.length > 1);

function score(tool: Tool, query: string, terms: readonly string[]): number {
  const name = tool.name.toLowerCase();
  let total = 0;
  if (name === query) total += 100;
  else if (name.startsWith(query)) total += 40;
  else if (name.includes(query)) total += 25;
  const nameTokens = new Set(tokenize(tool.name));
  const descriptionTokens = new Set(tokenize(tool.description));
  const hintTokens = new Set(tokenize(tool.searchHint ?? ''));
  const aliasTokens = new Set(tool.aliases.flatMap(tokenize));
  for (const term of terms) {
    if (nameTokens.has(term)) total += 12;
    else if (name.includes(term)) total += 6;
    if (aliasTokens.has(term)) total += 8;
    if (hintTokens.has(term)) total += 6;
    if (descriptionTokens.has(term)) total += 3;
  }
  return total;
}

/** Ranks a pool's tools (deferred ones included) by name, alias, hint and description. */
export function searchPool(pool: Pool, query: string, limit: number): Tool[] {
  const normalized = query.trim().toLowerCase();
  if (normalized.length === 0) return [];
  const terms = tokenize(normalized);
  return pool.tools
    .map((tool) => ({ tool, score: score(tool, normalized, terms) }))
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || (a.tool.name < b.tool.name ? -1 : 1))
    .slice(0, limit)
    .map((entry) => entry.tool);
}
