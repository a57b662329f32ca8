// Reads the embedded backend's documents: one JSONL file (`{id?, text, source?, title?, section?, page?,
// ...metadata}` per line) or a folder of .md/.txt files whose YAML front matter is their metadata.
// Metadata may also sit under a `metadata` object and the text under `page_content`, as LangChain and
// LlamaIndex export them. Any malformed input throws with the file (and line) named, so a bad knowledge
// base fails at start-up.
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join, relative, sep } from 'node:path';
import { parse as parseYaml } from 'yaml';

export interface RagDocument {
  id: string;
  text: string;
  source: string;
  metadata: Record<string, unknown>;
}

const TEXT_EXTENSIONS = new Set(['.md', '.markdown', '.txt']);
const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Top-level fields and a nested `metadata` object, merged into one set. Both shapes are common; reading
 * only one would index the other's documents without their tenant tags, so every filter would miss them.
 * A key given in both places with different values is refused: which one a filter should see is a guess.
 */
function mergedFields(record: Record<string, unknown>, where: string): Record<string, unknown> {
  const { metadata: nested, ...fields } = record;
  if (nested === undefined) return fields;
  if (!isRecord(nested)) throw new Error(`${where}: "metadata" must be an object`);
  for (const key of Object.keys(nested)) {
    if (Object.hasOwn(fields, key) && JSON.stringify(fields[key]) !== JSON.stringify(nested[key])) {
      throw new Error(`${where}: "${key}" differs between the document and its "metadata"`);
    }
  }
  return { ...nested, ...fields };
}

/** Splits a record into the document's own fields and the rest, which becomes metadata. */
function toDocument(record: Record<string, unknown>, fallbackId: string, fallbackSource: string, where: string): RagDocument {
  const { id, text, page_content: pageContent, source, ...metadata } = mergedFields(record, where);
  const body = text ?? pageContent;
  if (typeof body !== 'string') throw new Error(`${where}: "text" (or "page_content") must be a string`);
  if (id !== undefined && typeof id !== 'string' && typeof id !== 'number') throw new Error(`${where}: "id" must be a string or number`);
  if (source !== undefined && typeof source !== 'string') throw new Error(`${where}: "source" must be a string`);
  return { id: id === undefined ? fallbackId : String(id), text: body, source: source ?? fallbackSource, metadata };
}

export function parseJsonl(content: string, fileName: string): RagDocument[] {
  const documents: RagDocument[] = [];
  content.split(/\r?\n/).forEach((line, index) => {
    if (line.trim().length === 0) return;
    const where = `${fileName}:${index + 1}`;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (error) {
      throw new Error(`${where}: not valid JSON (${(error as Error).message})`);
    }
    if (!isRecord(record)) throw new Error(`${where}: each line must be a JSON object`);
    const fallbackId = `${fileName}:${index + 1}`;
    documents.push(toDocument(record, fallbackId, typeof record.id === 'string' ? record.id : fallbackId, where));
  });
  return documents;
}

export function parseTextDocument(content: string, relativePath: string): RagDocument {
  const match = FRONT_MATTER.exec(content);
  let meta: Record<string, unknown> = {};
  if (match) {
    const parsed: unknown = parseYaml(match[1]!);
    if (parsed !== null && parsed !== undefined && !isRecord(parsed)) {
      throw new Error(`${relativePath}: front matter must be a YAML mapping`);
    }
    meta = parsed ?? {};
  }
  const body = match ? content.slice(match[0].length) : content;
  return toDocument({ ...meta, text: body }, relativePath, relativePath, relativePath);
}

async function listTextFiles(dir: string, out: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) await listTextFiles(full, out);
    else if (entry.isFile() && TEXT_EXTENSIONS.has(extname(entry.name).toLowerCase())) out.push(full);
  }
}

/** Loads every document under `path` (a .jsonl file or a folder), in a stable order. */
export async function loadDocuments(path: string): Promise<RagDocument[]> {
  const info = await stat(path);
  if (info.isFile()) return parseJsonl(await readFile(path, 'utf8'), basename(path));
  const files: string[] = [];
  await listTextFiles(path, files);
  files.sort();
  const documents: RagDocument[] = [];
  for (const file of files) {
    const relativePath = relative(path, file).split(sep).join('/');
    documents.push(parseTextDocument(await readFile(file, 'utf8'), relativePath));
  }
  return documents;
}
