// Reads the embedded backend's documents: one JSONL file (`{id?, text, source?, title?, section?, page?,
// ...metadata}` per line) or a folder of .md/.txt files whose YAML front matter is their metadata.
// Any malformed input throws with the file (and line) named, so a bad knowledge base fails at start-up.
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

/** Splits a record into the document's own fields and the rest, which becomes metadata. */
function toDocument(record: Record<string, unknown>, fallbackId: string, fallbackSource: string, where: string): RagDocument {
  const { id, text, source, ...metadata } = record;
  if (typeof text !== 'string') throw new Error(`${where}: "text" must be a string`);
  if (id !== undefined && typeof id !== 'string' && typeof id !== 'number') throw new Error(`${where}: "id" must be a string or number`);
  if (source !== undefined && typeof source !== 'string') throw new Error(`${where}: "source" must be a string`);
  return { id: id === undefined ? fallbackId : String(id), text, source: source ?? fallbackSource, metadata };
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
