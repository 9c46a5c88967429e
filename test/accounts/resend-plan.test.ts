// What follows a 400: the named records are rejected with the service's messages, the others are
// resent, records of a named accountId that has several records go again one by one, and an
// accountId that is in no record of the request is returned to be reported, refusing nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planAfterValidationError } from '../../src/accounts/resend-plan.ts';

interface E {
  id: string;
  n: number;
}
const e = (n: number, id: string): E => ({ n, id });
const ids = (plan: ReturnType<typeof planAfterValidationError<E>>) => ({
  rejected: plan.rejected.map((r) => [r.entry.n, r.errors]),
  resend: plan.resend.map((g) => g.map((x) => x.n)),
});
const withUnknown = (plan: ReturnType<typeof planAfterValidationError<E>>) => ({ ...ids(plan), unknown: plan.unknown, namedNone: plan.namedNone });

describe('planAfterValidationError', () => {
  it('rejects the single record of a named accountId and resends the rest', () => {
    const group = [e(0, 'A'), e(1, 'B'), e(2, 'C')];
    const plan = planAfterValidationError(group, [{ accountId: 'B', errors: ['emails[0].email must be a valid email address'] }], (x) => x.id, 'x');
    assert.deepEqual(ids(plan), { rejected: [[1, ['emails[0].email must be a valid email address']]], resend: [[0, 2]] });
  });

  it('isolates several records of one named accountId, in order, after the rest', () => {
    const group = [e(0, 'A'), e(1, 'B'), e(2, 'A'), e(3, 'C')];
    const plan = planAfterValidationError(group, [{ accountId: 'A', errors: ['m1'] }, { accountId: 'A', errors: ['m2', 'm1'] }], (x) => x.id, 'x');
    assert.deepEqual(ids(plan), { rejected: [], resend: [[1, 3], [0], [2]] });
  });

  it('resends the whole group when the 400 names only an account not in it, and reports that account', () => {
    const group = [e(0, 'A'), e(1, 'B')];
    assert.deepEqual(withUnknown(planAfterValidationError(group, [{ accountId: 'Z', errors: ['nope'] }, { accountId: 'Z', errors: ['again'] }], (x) => x.id, 'x')), {
      rejected: [],
      resend: [[0, 1]],
      unknown: [{ accountId: 'Z', errors: ['nope', 'again'] }],
      namedNone: true,
    });
  });

  it('given the same answer to that resend, rejects the group with the message, instead of looping', () => {
    const group = [e(0, 'A'), e(1, 'B')];
    assert.deepEqual(withUnknown(planAfterValidationError(group, [{ accountId: 'Z', errors: ['nope'] }], (x) => x.id, 'x', true)), {
      rejected: [[0, ['account "Z" (not in this request): nope']], [1, ['account "Z" (not in this request): nope']]],
      resend: [],
      unknown: [{ accountId: 'Z', errors: ['nope'] }],
      namedNone: true,
    });
    // The service's '' (no account it could read) is not an id to quote.
    assert.deepEqual(ids(planAfterValidationError(group, [{ accountId: '', errors: ['Request body must be valid JSON.'] }], (x) => x.id, 'x', true)).rejected, [
      [0, ['Request body must be valid JSON.']],
      [1, ['Request body must be valid JSON.']],
    ]);
  });

  it('a 400 naming nobody at all is the refusal of every record: nothing to resend', () => {
    const group = [e(0, 'A'), e(1, 'B')];
    assert.deepEqual(withUnknown(planAfterValidationError(group, [], (x) => x.id, 'The service refused the request.')), {
      rejected: [[0, ['The service refused the request.']], [1, ['The service refused the request.']]],
      resend: [],
      unknown: [],
      namedNone: true,
    });
  });

  it('with records named and an unknown account too, handles the named ones and reports the unknown one', () => {
    const group = [e(0, 'A'), e(1, 'B'), e(2, 'C'), e(3, 'C')];
    const failures = [{ accountId: 'B', errors: ['bad email'] }, { accountId: 'GHOST', errors: ['who?'] }, { accountId: 'C', errors: ['m'] }];
    assert.deepEqual(withUnknown(planAfterValidationError(group, failures, (x) => x.id, 'x')), {
      rejected: [[1, ['bad email']]],
      resend: [[0], [2], [3]],
      unknown: [{ accountId: 'GHOST', errors: ['who?'] }],
      namedNone: false,
    });
    // Also when the group is itself a resend: records were told apart, so this is progress.
    assert.equal(planAfterValidationError(group, failures, (x) => x.id, 'x', true).rejected.length, 1);
  });
});
