import { useState } from 'preact/hooks';
import type { JsonSchema } from './api.js';

type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'list' | 'json';

const typeOf = (schema: JsonSchema | undefined): unknown => (Array.isArray(schema?.type) ? schema.type.find((t) => t !== 'null') : schema?.type);

const kindOf = (schema: JsonSchema): FieldKind => {
  if (Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === 'string')) return 'enum';
  const type = typeOf(schema);
  if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') return type;
  // An array of strings or numbers is typed as a list, one item per line, not as JSON.
  const items = typeOf(schema.items as JsonSchema | undefined);
  if (type === 'array' && (items === 'string' || items === 'number' || items === 'integer')) return 'list';
  return 'json';
};

/** A list field's lines → its items (blank lines left out); a problem names the field. */
function listItems(name: string, text: string, items: unknown): { value?: unknown[]; problem?: string } {
  const lines = text.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  if (items === 'string') return { value: lines };
  const numbers = lines.map(Number);
  if (numbers.some((n) => !Number.isFinite(n) || (items === 'integer' && !Number.isInteger(n)))) return { problem: `${name}: one ${items === 'integer' ? 'integer' : 'number'} per line` };
  return { value: numbers };
}

/** Field values (as typed) → the arguments object; a problem names the field. */
function toArguments(schema: JsonSchema, values: Record<string, string | boolean>): { args?: Record<string, unknown>; problem?: string } {
  const args: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const raw = values[name];
    const kind = kindOf(field);
    if (kind === 'boolean') {
      if (raw !== undefined) args[name] = raw === true;
      continue;
    }
    if (raw === undefined || raw === '') continue;
    const text = String(raw);
    if (kind === 'number' || kind === 'integer') {
      const value = Number(text);
      if (!Number.isFinite(value) || (kind === 'integer' && !Number.isInteger(value))) return { problem: `${name}: not ${kind === 'integer' ? 'an integer' : 'a number'}` };
      args[name] = value;
    } else if (kind === 'list') {
      const { value, problem } = listItems(name, text, typeOf(field.items as JsonSchema | undefined));
      if (problem) return { problem };
      args[name] = value;
    } else if (kind === 'json') {
      try {
        args[name] = JSON.parse(text);
      } catch {
        return { problem: `${name}: not valid JSON` };
      }
    } else args[name] = text;
  }
  return { args };
}

/**
 * A form generated from a tool's JSON Schema: one labelled field per top-level property (text, number,
 * checkbox, select; one item per line for a list of strings or numbers; JSON for other objects and arrays),
 * or a single JSON box for a schema without properties.
 * Validation stays the server's job: the call answers VALIDATION_ERROR as a model would see it.
 */
export function SchemaForm({ schema, idPrefix, busy, onSubmit }: { schema: JsonSchema; idPrefix: string; busy: boolean; onSubmit: (args: Record<string, unknown>) => void }) {
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [rawJson, setRawJson] = useState('{}');
  const [problem, setProblem] = useState<string | null>(null);
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const set = (name: string, value: string | boolean) => setValues((current) => ({ ...current, [name]: value }));

  const submit = (event: Event) => {
    event.preventDefault();
    if (properties.length === 0) {
      try {
        const parsed: unknown = JSON.parse(rawJson);
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return setProblem('arguments must be a JSON object');
        setProblem(null);
        return onSubmit(parsed as Record<string, unknown>);
      } catch {
        return setProblem('arguments: not valid JSON');
      }
    }
    const { args, problem: found } = toArguments(schema, values);
    setProblem(found ?? null);
    if (args) onSubmit(args);
  };

  return (
    <form class="schema-form" onSubmit={submit}>
      {properties.length === 0 ? (
        <div class="field">
          <label for={`${idPrefix}-json`}>Arguments (JSON object)</label>
          <textarea id={`${idPrefix}-json`} rows={4} value={rawJson} onInput={(e) => setRawJson((e.target as HTMLTextAreaElement).value)} />
        </div>
      ) : null}
      {properties.map(([name, field]) => {
        const id = `${idPrefix}-${name}`;
        const kind = kindOf(field);
        const label = `${name}${required.has(name) ? ' (required)' : ''}${kind === 'json' ? ' (JSON)' : kind === 'list' ? ' (one per line)' : ''}`;
        // The browser refuses to submit a required field left empty, and says which.
        const mustFill = required.has(name);
        return (
          <div class="field" key={name}>
            {kind === 'boolean' ? (
              <label class="check">
                <input id={id} type="checkbox" checked={values[name] === true} onChange={(e) => set(name, (e.target as HTMLInputElement).checked)} /> {label}
              </label>
            ) : (
              <label for={id}>{label}</label>
            )}
            {kind === 'enum' ? (
              <select id={id} required={mustFill} value={String(values[name] ?? '')} onChange={(e) => set(name, (e.target as HTMLSelectElement).value)}>
                <option value="">—</option>
                {(field.enum as string[]).map((option) => (
                  <option key={option} value={option}>{option}</option>
                ))}
              </select>
            ) : kind === 'json' || kind === 'list' ? (
              <textarea id={id} rows={3} required={mustFill} value={String(values[name] ?? '')} onInput={(e) => set(name, (e.target as HTMLTextAreaElement).value)} />
            ) : kind === 'boolean' ? null : kind === 'string' ? (
              <input id={id} type="text" required={mustFill} value={String(values[name] ?? '')} onInput={(e) => set(name, (e.target as HTMLInputElement).value)} />
            ) : (
              <input id={id} type="number" required={mustFill} step={kind === 'integer' ? 1 : 'any'} value={String(values[name] ?? '')} onInput={(e) => set(name, (e.target as HTMLInputElement).value)} />
            )}
            {field.description ? <p class="hint">{field.description}</p> : null}
          </div>
        );
      })}
      <button type="submit" disabled={busy}>Run</button>
      {problem ? <p class="error" role="alert">{problem}</p> : null}
    </form>
  );
}
