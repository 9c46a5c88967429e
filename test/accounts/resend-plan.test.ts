// What follows a 400: the named records are rejected with the service's messages, the others are
// resent, and records of a named accountId that has several records go again one by one.
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

  it('rejects everything when the 400 names no record of the batch, instead of looping', () => {
    const group = [e(0, 'A'), e(1, 'B')];
    assert.deepEqual(ids(planAfterValidationError(group, [{ accountId: 'Z', errors: ['nope'] }], (x) => x.id, 'x')), {
      rejected: [[0, ['nope']], [1, ['nope']]],
      resend: [],
    });
    assert.deepEqual(ids(planAfterValidationError(group, [], (x) => x.id, 'The service refused the request.')).rejected, [
      [0, ['The service refused the request.']],
      [1, ['The service refused the request.']],
    ]);
  });
});
