// What to do with a batch the service refused with a 400. The service processed nothing of it and
// names failures by accountId only, so: a named accountId with one record in the batch is that
// record's fault; every unnamed record goes again; and records of a named accountId that has
// several records in the batch go again one per request, because the 400 cannot say which of them
// failed and a valid record must not be rejected with its neighbour.
//
// A 400 may also name an accountId that is not in the request at all. That refuses none of the
// records sent, so they go again, and the name is returned as `unknown` for the writer to report.
// When the 400 names no record of the group, the group is resent once; a second such answer to
// the same records is taken as their refusal, so a service that keeps answering it cannot make
// the writer loop. Pure; tested directly.
import type { AccountFailure } from '../core/errors.ts';

export interface ResendPlan<E> {
  rejected: { entry: E; errors: string[] }[];
  /** Groups to send next, in this order; records of one key keep their relative order. */
  resend: E[][];
  /** AccountIds the 400 named that no record of the group has, with their messages. */
  unknown: AccountFailure[];
  /** True when the 400 named no record of the group: the resend is then the group's last. */
  namedNone: boolean;
}

function mergeByAccount(failures: readonly AccountFailure[]): Map<string, string[]> {
  const named = new Map<string, string[]>();
  for (const failure of failures) {
    const messages = named.get(failure.accountId) ?? [];
    for (const message of failure.errors) if (!messages.includes(message)) messages.push(message);
    named.set(failure.accountId, messages);
  }
  return named;
}

export function planAfterValidationError<E>(
  group: readonly E[],
  failures: readonly AccountFailure[],
  accountIdOf: (entry: E) => string,
  /** Used when the 400 names nothing at all, so nothing can be told apart. */
  fallbackMessage: string,
  /** Whether this group is already the resend of a 400 that named none of its records. */
  resentAfterNamingNone = false,
): ResendPlan<E> {
  const named = mergeByAccount(failures);
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
  const unknown = [...named].filter(([id]) => !byNamedId.has(id)).map(([accountId, errors]) => ({ accountId, errors }));
  if (byNamedId.size === 0) {
    if (unknown.length > 0 && !resentAfterNamingNone) return { rejected: [], resend: [[...group]], unknown, namedNone: true };
    // Nothing to tell apart: a 400 naming nobody, or the same answer to the resend. Report the
    // records with what the service said rather than send them a third time.
    const messages = unknown.flatMap(({ accountId, errors }) => errors.map((m) => (accountId === '' ? m : `account ${JSON.stringify(accountId)} (not in this request): ${m}`)));
    const errors = messages.length > 0 ? messages : [fallbackMessage];
    return { rejected: group.map((entry) => ({ entry, errors })), resend: [], unknown, namedNone: true };
  }
  const plan: ResendPlan<E> = { rejected: [], resend: rest.length > 0 ? [rest] : [], unknown, namedNone: false };
  for (const [id, entries] of byNamedId) {
    const errors = named.get(id) ?? [];
    if (entries.length === 1) plan.rejected.push({ entry: entries[0] as E, errors });
    else for (const entry of entries) plan.resend.push([entry]);
  }
  return plan;
}
