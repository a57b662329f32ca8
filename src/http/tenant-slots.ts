/**
 * One of a tenant's `limits.maxInFlight` slots (docs/architecture.md#request-path): `take` answers its
 * release (idempotent; call it when the call ends), or undefined when the tenant has every slot in use or is
 * configured nowhere.
 * Requests that run calls and the calls they leave running (a task's detached run) count alike; the
 * admission plugin keeps the count.
 */
export interface TenantSlots {
  take(tenant: string): Promise<(() => void) | undefined>;
}
