// What to do with a batch the service refused with a 400. The service processed nothing of it and
// names failures by accountId only, so: a named accountId with one record in the batch is that
// record's fault; every unnamed record goes again; and records of a named accountId that has
// several records in the batch go again one per request, because the 400 cannot say which of them
// failed and a valid record must not be rejected with its neighbour. Pure; tested directly.
import type { AccountFailure } from '../client/errors.ts';

export interface ResendPlan<E> {
  rejected: { entry: E; errors: string[] }[];
  /** Groups to send next, in this order; records of one key keep their relative order. */
  resend: E[][];
}

export function planAfterValidationError<E>(
  group: readonly E[],
  failures: readonly AccountFailure[],
  accountIdOf: (entry: E) => string,
  /** Used when the 400 names no record of the group, so nothing can be told apart. */
  fallbackMessage: string,
): ResendPlan<E> {
  const named = new Map<string, string[]>();
  for (const failure of failures) {
    const messages = named.get(failure.accountId) ?? [];
    for (const message of failure.errors) if (!messages.includes(message)) messages.push(message);
    named.set(failure.accountId, messages);
  }
  const byNamedId = new Map<string, E[]>();
  const rest: E[] = [];
  for (const entry of group) {
    const id = accountIdOf(entry);
    if (!named.has(id)) {
      rest.push(entry);
      continue;
    }
    const list = byNamedId.get(id);
    if (list === undefined) byNamedId.set(id, [entry]);
    else list.push(entry);
  }
  if (byNamedId.size === 0) {
    // Resending the same records would get the same answer; report them rather than loop.
    const messages = [...named.values()].flat();
    const errors = messages.length > 0 ? messages : [fallbackMessage];
    return { rejected: group.map((entry) => ({ entry, errors })), resend: [] };
  }
  const plan: ResendPlan<E> = { rejected: [], resend: rest.length > 0 ? [rest] : [] };
  for (const [id, entries] of byNamedId) {
    const errors = named.get(id) ?? [];
    if (entries.length === 1) plan.rejected.push({ entry: entries[0] as E, errors });
    else for (const entry of entries) plan.resend.push([entry]);
  }
  return plan;
}
