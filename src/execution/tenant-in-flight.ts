/**
 * Calls in flight per tenant: the one count `tenants.<t>.limits.maxInFlight` bounds. A request on a route
 * that runs calls holds one slot (src/plugins/admission.ts); each inner call of a code-mode script holds
 * one more while it runs, so a script cannot start calls past its tenant's bound (docs/code-mode.md#limits).
 */
export class TenantInFlight {
  private readonly counts = new Map<string, number>();

  /** Takes a slot unless the tenant already holds `limit`; false when refused. */
  tryEnter(tenant: string, limit: number): boolean {
    const current = this.counts.get(tenant) ?? 0;
    if (current >= limit) return false;
    this.counts.set(tenant, current + 1);
    return true;
  }

  leave(tenant: string): void {
    const current = (this.counts.get(tenant) ?? 1) - 1;
    if (current <= 0) this.counts.delete(tenant);
    else this.counts.set(tenant, current);
  }

  /** Slots the tenant holds now. */
  of(tenant: string): number {
    return this.counts.get(tenant) ?? 0;
  }
}
