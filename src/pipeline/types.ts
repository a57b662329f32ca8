import type { Logger, Tool, ToolCall, ToolContext, ToolResult } from '../types.js';

export type ToolMode = 'default' | 'readonly';

export type AccessDecision = { ok: true } | { ok: false; reason: string };

/** What a policy sees besides the call. Built per call from the config snapshot the call started on. */
export interface PolicyContext extends ToolContext {
  readonly mode: ToolMode;
  /** Re-checks exposure rules (tenant allow/deny, roles, mode, source allowlists) against the call's config snapshot. */
  readonly checkAccess: (tool: Tool) => AccessDecision;
  /** Options for a policy from the tenant's config (`tenants.<t>.policies.<name>`), or undefined. */
  readonly policyOptions: (policy: string) => unknown;
  /** Set when an approved call is resumed: the approval policy lets it through once. */
  readonly approval?: { readonly id: string; readonly approvedBy: string };
}

export type Next = (call: ToolCall, ctx: PolicyContext) => Promise<ToolResult>;
export type Policy = (call: ToolCall, ctx: PolicyContext, next: Next) => Promise<ToolResult>;

/**
 * What a factory returns when its options make it do nothing (no rate limit configured, no tool needing
 * approval): the chain leaves it out, so an idle policy costs a call nothing.
 */
export const passThrough: Policy = (call, ctx, next) => next(call, ctx);

/** Composes policies around a terminal executor, outermost first. */
export function composePolicies(policies: readonly Policy[], terminal: Next): Next {
  return policies.reduceRight<Next>((next, policy) => (call, ctx) => policy(call, ctx, next), terminal);
}

export type { Logger };
