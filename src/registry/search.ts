import type { Tool } from '../call/types.js';
import type { Pool } from './pool.js';

const tokenize = (text: string): string[] => text.toLowerCase().split(/[^a-z0-9]+/).filter((token) => token.length > 1);

interface SearchTerms {
  name: string;
  nameTokens: ReadonlySet<string>;
  descriptionTokens: ReadonlySet<string>;
  hintTokens: ReadonlySet<string>;
  aliasTokens: ReadonlySet<string>;
}

// Tools are frozen and shared by every pool of a catalog, so their tokens are computed once, not per
// query (an imported OpenAPI document puts a thousand long descriptions in one pool).
const termsOfTool = new WeakMap<Tool, SearchTerms>();
function termsOf(tool: Tool): SearchTerms {
  let terms = termsOfTool.get(tool);
  if (!terms) {
    terms = {
      name: tool.name.toLowerCase(),
      nameTokens: new Set(tokenize(tool.name)),
      descriptionTokens: new Set(tokenize(tool.description)),
      hintTokens: new Set(tokenize(tool.searchHint ?? '')),
      aliasTokens: new Set(tool.aliases.flatMap(tokenize)),
    };
    termsOfTool.set(tool, terms);
  }
  return terms;
}

function score(tool: Tool, query: string, terms: readonly string[]): number {
  const { name, nameTokens, descriptionTokens, hintTokens, aliasTokens } = termsOf(tool);
  let total = 0;
  if (name === query) total += 100;
  else if (name.startsWith(query)) total += 40;
  else if (name.includes(query)) total += 25;
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
