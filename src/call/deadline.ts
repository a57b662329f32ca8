/** A per-call deadline (epoch ms), set by the batch runner; timeout and retry never run past it. */
export interface DeadlineAware {
  readonly deadline?: number;
}

export function deadlineOf(ctx: object): number | undefined {
  const deadline = (ctx as DeadlineAware).deadline;
  return typeof deadline === 'number' && Number.isFinite(deadline) ? deadline : undefined;
}
