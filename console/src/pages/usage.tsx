import { isAdmin, type ApiBody, type Me } from '../api.js';
import { DataTable, ErrorNote, useApi } from '../components.js';
import { time } from '../format.js';

type Budget = ApiBody<'getUsage'>['budgets'][number];
type TenantBudget = ApiBody<'getTenantUsage'>['budgets'][number];

const PERIOD: Record<Budget['period'], string> = { day: 'per day', week: 'per week', month: 'per month', rolling: 'rolling' };

/** One budget as a bar: used against its limit, amber from its warn threshold, red at the limit. */
function Bar({ budget }: { budget: Budget | TenantBudget }) {
  const used = budget.used;
  const share = used === null || budget.limit === 0 ? 0 : Math.min(1, used / budget.limit);
  const state = used === null ? '' : used >= budget.limit ? 'full' : share >= budget.warnAt ? 'warn' : '';
  const label = `${budget.id}${budget.tool ? ` (${budget.tool})` : ''}`;
  return (
    <div class="budget">
      <div class="budget-head">
        <strong>{label}</strong>
        <span class="hint">
          {budget.scope}, {budget.limit} {budget.unit} {PERIOD[budget.period]}
          {budget.period === 'rolling' ? '' : ` (${budget.timeZone})`}, resets {time(budget.resetAt)}
          {budget.onLimit === 'approve' ? ', then needs approval' : ''}
        </span>
      </div>
      {used === null ? (
        <p class="hint">Counted per {budget.scope}: see its top users and tools.</p>
      ) : (
        <div class={`bar ${state}`} role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={budget.limit} aria-valuenow={used}>
          <div class="bar-fill" style={{ width: `${Math.round(share * 100)}%` }} />
          <span class="bar-text">{used} of {budget.limit} used, {budget.remaining} left</span>
        </div>
      )}
    </div>
  );
}

/** The caller's budgets, and for a tenant admin each budget's tenant-wide usage with its top users and tools (docs/governance.md#budgets). */
export function UsagePage({ me }: { me: Me }) {
  const mine = useApi<ApiBody<'getUsage'>>('/v1/usage', 15_000);
  const tenant = useApi<ApiBody<'getTenantUsage'>>(isAdmin(me) ? '/v1/admin/usage' : null, 15_000);
  return (
    <div>
      <p class="hint">What the budgets of your tenant have counted this period, in calls or cost units. Past a limit a call is refused (QUOTA_EXCEEDED) or waits for approval until the budget resets.</p>
      <ErrorNote error={mine.error} />
      <h2>Your budgets</h2>
      {mine.data && mine.data.budgets.length === 0 ? <p class="empty">No budget counts your calls.</p> : null}
      {(mine.data?.budgets ?? []).map((budget) => <Bar key={`${budget.id}\u0000${budget.tool ?? ''}`} budget={budget} />)}
      {isAdmin(me) ? (
        <>
          <h2>Your tenant</h2>
          <ErrorNote error={tenant.error} />
          {(tenant.data?.budgets ?? []).map((budget) => (
            <section key={budget.id} class="budget-tenant">
              <Bar budget={budget} />
              <div class="tops">
                <DataTable caption={`Top users of ${budget.id}`} headers={['User', `Used (${budget.unit})`]}>
                  {budget.topUsers.map((row) => <tr key={row.user}><td>{row.user}</td><td class="num">{row.used}</td></tr>)}
                </DataTable>
                <DataTable caption={`Top tools of ${budget.id}`} headers={['Tool', `Used (${budget.unit})`]}>
                  {budget.topTools.map((row) => <tr key={row.tool}><td>{row.tool}</td><td class="num">{row.used}</td></tr>)}
                </DataTable>
              </div>
            </section>
          ))}
        </>
      ) : null}
    </div>
  );
}
