import { useEffect, useState } from 'preact/hooks';
import { api, isApprover, type Approval, type ApprovalList, type ListedApproval, type Me } from '../api.js';
import { ErrorNote, JsonBlock, ResultView, useAction, useApi } from '../components.js';
import { duration, time } from '../format.js';

const POLL_MS = 2000;
/** Pending approvals shown at first, and added by "Show more" (the API's largest page is 200). */
const PAGE = 50;
const MAX_PAGE = 200;

/**
 * The call's arguments: inline when the listing carries them; large ones are listed by size and preview
 * only, and loaded whole from the approval itself on request.
 */
function Arguments({ approval }: { approval: ListedApproval }) {
  const [whole, setWhole] = useState<Approval | null>(null);
  const action = useAction();
  // Loaded whole, it has its arguments, unless it was decided meanwhile (then only the summary is kept).
  const loaded = whole && whole.argumentsSha256 === undefined ? whole : null;
  const shown = loaded ?? (approval.argumentsSha256 === undefined ? approval : null);
  if (shown) {
    return (
      <div class="side-by-side">
        <section>
          <h4>Model arguments</h4>
          <JsonBlock value={shown.modelArguments ?? shown.arguments ?? {}} label="model arguments" />
        </section>
        <section>
          <h4>Runs with (server-bound)</h4>
          <JsonBlock value={shown.arguments ?? {}} label="server-bound arguments" />
        </section>
      </div>
    );
  }
  const load = () =>
    action.run(async () => {
      setWhole((await api<Approval>('GET', `/v1/approvals/${encodeURIComponent(approval.id)}`)).body);
    });
  return (
    <section>
      <h4>Arguments ({approval.argumentsBytes ?? '?'} bytes, SHA-256 {approval.argumentsSha256?.slice(0, 12)}…)</h4>
      <pre class="json" aria-label="arguments preview" tabIndex={0}>{`${approval.argumentsPreview ?? ''}…`}</pre>
      {approval.status === 'pending' ? (
        <button type="button" disabled={action.busy} onClick={load}>Load the whole arguments</button>
      ) : (
        <p class="hint">Once decided, only this summary of large arguments is kept.</p>
      )}
      <ErrorNote error={action.error} />
    </section>
  );
}

function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

function PendingCard({ approval, me, now, onDecided }: { approval: ListedApproval; me: Me; now: number; onDecided: () => void }) {
  const [reason, setReason] = useState('');
  const action = useAction();
  const canDecide = isApprover(me) && approval.requester !== me.user;
  const decide = (verdict: 'approve' | 'deny') =>
    action.run(async () => {
      const body = verdict === 'deny' ? { body: reason.trim() ? { reason: reason.trim() } : {} } : {};
      await api('POST', `/v1/approvals/${encodeURIComponent(approval.id)}/${verdict}`, body);
      onDecided();
    });
  const left = Date.parse(approval.expiresAt) - now;
  const reasonId = `reason-${approval.id}`;
  return (
    <article class="card" aria-label={`Approval for ${approval.tool}`}>
      <h3>{approval.tool}</h3>
      <dl class="facts">
        <dt>Requester</dt>
        <dd>{approval.requester}</dd>
        <dt>Age</dt>
        <dd>{duration(now - Date.parse(approval.createdAt))}</dd>
        <dt>Time left</dt>
        <dd>{left > 0 ? duration(left) : 'expired'}</dd>
        <dt>Call id</dt>
        <dd>{approval.callId}</dd>
      </dl>
      <Arguments approval={approval} />
      {canDecide ? (
        <div class="decide">
          <label for={reasonId}>Reason (sent with Deny)</label>
          <input id={reasonId} type="text" maxLength={500} value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
          <button type="button" disabled={action.busy} onClick={() => decide('approve')}>Approve</button>
          <button type="button" class="danger" disabled={action.busy} onClick={() => decide('deny')}>Deny</button>
        </div>
      ) : (
        <p class="hint">{approval.requester === me.user ? 'Your request: waiting for an approver of your tenant.' : 'Only approvers of your tenant decide.'}</p>
      )}
      <ErrorNote error={action.error} />
    </article>
  );
}

export function ApprovalsPage({ me }: { me: Me }) {
  const [limit, setLimit] = useState(PAGE);
  const pending = useApi<ApprovalList>(`/v1/approvals?status=pending&limit=${limit}`, POLL_MS);
  const decided = useApi<ApprovalList>(`/v1/approvals?status=decided&limit=${PAGE}`, POLL_MS * 2);
  const now = useNow(1000);
  const refresh = () => {
    pending.reload();
    decided.reload();
  };
  const open = pending.data?.approvals ?? [];
  return (
    <div>
      <p class="hint">
        {isApprover(me) ? 'Pending calls of your tenant. New requests appear here by themselves.' : 'Your own requests and their outcome.'}
      </p>
      <ErrorNote error={pending.error} />
      <section aria-labelledby="pending-heading">
        <h2 id="pending-heading">Pending ({open.length}{pending.data?.nextCursor ? '+' : ''})</h2>
        {pending.data && open.length === 0 ? <p class="empty">Nothing waits for a decision.</p> : null}
        {open.map((approval) => (
          <PendingCard key={approval.id} approval={approval} me={me} now={now} onDecided={refresh} />
        ))}
        {pending.data?.nextCursor ? (
          limit < MAX_PAGE ? (
            <button type="button" onClick={() => setLimit(Math.min(MAX_PAGE, limit + PAGE))}>Show more</button>
          ) : (
            <p class="hint">More calls wait: the {MAX_PAGE} that expire soonest are shown; decide some to see the rest.</p>
          )
        ) : null}
      </section>
      <section aria-labelledby="decided-heading">
        <h2 id="decided-heading">Decided</h2>
        <ErrorNote error={decided.error} />
        {decided.data && decided.data.approvals.length === 0 ? <p class="empty">No decided calls kept.</p> : null}
        {(decided.data?.approvals ?? []).map((approval) => (
          <details class="card decided" key={approval.id}>
            <summary>
              <span class={`badge ${approval.status}`}>{approval.status}</span> {approval.tool} · by {approval.requester}
              {approval.decidedBy ? ` · decided by ${approval.decidedBy}` : ''}
              {approval.decidedAt ? ` · ${time(approval.decidedAt)}` : ''}
            </summary>
            <Arguments approval={approval} />
            {approval.result ? <ResultView result={approval.result} /> : <p class="hint">Running…</p>}
          </details>
        ))}
      </section>
    </div>
  );
}
