import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, type ToolResult } from './api.js';
import { milliseconds, pretty } from './format.js';

/** An API failure in words (text only: the server's message may quote user input). */
export function ErrorNote({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const text = error instanceof ApiError ? `${error.message} (${error.code}, HTTP ${error.status})` : error instanceof Error ? error.message : String(error);
  return <p class="error" role="alert">{text}</p>;
}

/** JSON shown as text in a <pre>: never parsed as HTML. */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return <pre class="json" aria-label={label} tabIndex={0}>{pretty(value)}</pre>;
}

export function ResultView({ result }: { result: ToolResult }) {
  return (
    <div class={`result ${result.ok ? 'ok' : result.status === 'pending_approval' ? 'pending' : 'failed'}`}>
      <p>
        <strong>{result.ok ? 'ok' : result.status === 'pending_approval' ? 'pending approval' : (result.error?.errorType ?? 'failed')}</strong>
        {' · '}
        {result.name} · {milliseconds(result.durationMs)} ms{result.truncated ? ' · truncated' : ''}
        {result.approvalId ? ` · approval ${result.approvalId}` : ''}
      </p>
      <h4>Output (what the model reads)</h4>
      <pre class="json output" tabIndex={0}>{result.output}</pre>
      {result.trace !== null && result.trace !== undefined ? (
        <details>
          <summary>Trace</summary>
          <JsonBlock value={result.trace} label="trace" />
        </details>
      ) : null}
    </div>
  );
}

export interface Loaded<T> {
  data: T | null;
  error: unknown;
  reload: () => void;
}

/**
 * GET `path` now, and every `pollMs` when given, sending the last ETag back so an unchanged answer is a
 * 304 (the inbox shows new approvals without a reload and without re-sending the list).
 */
export function useApi<T>(path: string | null, pollMs?: number): Loaded<T> {
  // The answer with the path it answers: after a change of path (a new filter, page or tenant) nothing shows
  // the previous query's rows under the new one's heading while the new answer loads.
  const [answered, setAnswered] = useState<{ path: string; body: T } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const etag = useRef<string | null>(null);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => {
    etag.current = null;
    setTick((n) => n + 1);
  }, []);

  useEffect(() => {
    if (path === null) return;
    // An ETag is only good for the path it came from.
    etag.current = null;
    let stopped = false;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const answer = await api<T>('GET', path, { etag: etag.current, signal: controller.signal });
        if (stopped) return;
        if (answer.status !== 304) {
          etag.current = answer.etag;
          setAnswered({ path, body: answer.body });
        }
        setError(null);
      } catch (failure) {
        if (!stopped) setError(failure);
      }
      if (!stopped && pollMs) timer = setTimeout(load, pollMs);
    };
    void load();
    return () => {
      stopped = true;
      controller.abort();
      if (timer) clearTimeout(timer);
    };
  }, [path, pollMs, tick]);

  return { data: answered !== null && answered.path === path ? answered.body : null, error, reload };
}

export interface Action {
  busy: boolean;
  error: unknown;
  /** Runs `work` once at a time: busy while it runs, its failure kept in `error` (cleared on the next run). */
  run: (work: () => Promise<void>) => Promise<void>;
}

/** The state of a button's API call: every form and button of the console goes through it. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}

/**
 * A captioned table that scrolls sideways on a narrow screen; `headers` with an empty name are for row
 * actions. `stacked`: on a phone each row is a card of label/value lines (its cells carry `data-label`).
 */
export function DataTable({ caption, headers, children, stacked = false }: { caption: string; headers: string[]; children: preact.ComponentChildren; stacked?: boolean }) {
  return (
    <div class="table-wrap">
      <table class={stacked ? 'stacked' : undefined}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {headers.map((header, i) => (
              <th scope="col" key={i}>{header === '' ? <span class="sr-only">Actions</span> : header}</th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** A labelled filter choice: "any" (the empty value) or one of `options`. */
export function FilterSelect({ id, label, value, options, onChange }: { id: string; label: string; value: string; options: readonly string[]; onChange: (value: string) => void }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        <option value="">any</option>
        {options.map((option) => <option key={option} value={option}>{option}</option>)}
      </select>
    </div>
  );
}
