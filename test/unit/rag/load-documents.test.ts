import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDocuments, parseJsonl, parseTextDocument } from '../../../src/rag/load-documents.js';

describe('parseJsonl', () => {
  it('keeps id, text and source and turns every other field into metadata', () => {
    const [document] = parseJsonl('{"id":"d1","text":"hello","source":"a.md","tenant":"acme","page":2}\n', 'kb.jsonl');
    expect(document).toEqual({ id: 'd1', text: 'hello', source: 'a.md', metadata: { tenant: 'acme', page: 2 } });
  });

  it('reads metadata under a `metadata` object and text under `page_content` (LangChain), merged with top-level fields', () => {
    const [langchain] = parseJsonl('{"page_content":"hello","metadata":{"tenant":"acme","source":"a.md","page":2}}\n', 'kb.jsonl');
    expect(langchain).toEqual({ id: 'kb.jsonl:1', text: 'hello', source: 'a.md', metadata: { tenant: 'acme', page: 2 } });
    const [llamaIndex] = parseJsonl('{"id_":"n1","text":"hi","metadata":{"tenant":"acme"},"department":"hr"}\n', 'kb.jsonl');
    expect(llamaIndex).toEqual({ id: 'kb.jsonl:1', text: 'hi', source: 'kb.jsonl:1', metadata: { id_: 'n1', tenant: 'acme', department: 'hr' } });
    const [same] = parseJsonl('{"text":"x","tenant":"acme","metadata":{"tenant":"acme"}}\n', 'kb.jsonl');
    expect(same!.metadata).toEqual({ tenant: 'acme' });
  });

  it('refuses a key whose top-level and `metadata` values differ, and a `metadata` that is not an object', () => {
    expect(() => parseJsonl('{"text":"x","tenant":"acme","metadata":{"tenant":"globex"}}', 'kb.jsonl')).toThrow(/kb\.jsonl:1: "tenant" differs between the document and its "metadata"/);
    expect(() => parseJsonl('{"text":"x","metadata":"acme"}', 'kb.jsonl')).toThrow(/kb\.jsonl:1: "metadata" must be an object/);
  });

  it('names the line when one is broken, and skips blank lines', () => {
    expect(parseJsonl('\n{"text":"a"}\n\n', 'kb.jsonl')).toEqual([{ id: 'kb.jsonl:2', text: 'a', source: 'kb.jsonl:2', metadata: {} }]);
    expect(() => parseJsonl('{"text":"a"}\n{oops', 'kb.jsonl')).toThrow(/kb\.jsonl:2: not valid JSON/);
    expect(() => parseJsonl('{"id":"x"}', 'kb.jsonl')).toThrow(/kb\.jsonl:1: "text" \(or "page_content"\) must be a string/);
    expect(() => parseJsonl('[1]', 'kb.jsonl')).toThrow(/JSON object/);
  });
});

describe('parseTextDocument', () => {
  it('reads YAML front matter as metadata', () => {
    const document = parseTextDocument('---\ntenant: acme\ndepartment: [hr, finance]\ntitle: Leave\n---\n# Leave\n\nBody text.\n', 'hr/leave.md');
    expect(document).toEqual({
      id: 'hr/leave.md',
      source: 'hr/leave.md',
      text: '# Leave\n\nBody text.\n',
      metadata: { tenant: 'acme', department: ['hr', 'finance'], title: 'Leave' },
    });
  });

  it('takes a file without front matter whole, and refuses front matter that is not a mapping', () => {
    expect(parseTextDocument('just text', 'a.txt')).toEqual({ id: 'a.txt', source: 'a.txt', text: 'just text', metadata: {} });
    expect(() => parseTextDocument('---\n- a\n---\nx', 'b.md')).toThrow(/b\.md: front matter must be a YAML mapping/);
  });
});

describe('loadDocuments', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-rag-'));
    await mkdir(join(dir, 'kb', 'hr'), { recursive: true });
    await writeFile(join(dir, 'kb', 'hr', 'leave.md'), '---\ntenant: acme\n---\nLeave text');
    await writeFile(join(dir, 'kb', 'notes.txt'), 'Plain notes');
    await writeFile(join(dir, 'kb', 'image.png'), 'not text');
    await writeFile(join(dir, 'kb', '.hidden.md'), 'hidden');
    await writeFile(join(dir, 'kb.jsonl'), '{"text":"line one","tenant":"acme"}\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('walks a folder for .md and .txt files in a stable order, with posix relative ids', async () => {
    const documents = await loadDocuments(join(dir, 'kb'));
    expect(documents.map((document) => document.id)).toEqual(['hr/leave.md', 'notes.txt']);
    expect(documents[0]!.metadata).toEqual({ tenant: 'acme' });
  });

  it('reads a JSONL file', async () => {
    expect(await loadDocuments(join(dir, 'kb.jsonl'))).toEqual([{ id: 'kb.jsonl:1', text: 'line one', source: 'kb.jsonl:1', metadata: { tenant: 'acme' } }]);
  });

  it('fails on a path that does not exist', async () => {
    await expect(loadDocuments(join(dir, 'missing'))).rejects.toThrow(/ENOENT/);
  });
});
