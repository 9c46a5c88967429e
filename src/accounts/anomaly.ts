// Answers of the service that the writer can work around but should not hide: today one kind, a
// 400 naming an accountId that was not in the request. Its records were not refused, so they are
// sent again; the name is reported so someone can find out why the service said it.

/** A service answer the writer worked around but reports, emitted as `anomaly`: today a 400 naming an account that was not in the request. */
export interface AnomalyEvent {
  kind: 'unknown-account';
  /** The batch whose request was answered so. */
  batch: number;
  /** The accountId the 400 named ('' when the service could read none). */
  accountId: string;
  /** What the service said about it. */
  errors: string[];
  /** Records in the refused request. */
  records: number;
  /** What became of the records the 400 did not name: sent again, or (when the resend met the
   * same answer) rejected with reason 'server'. */
  action: 'resent' | 'rejected';
}

/** One line for people: stderr, a process warning. */
export function describeAnomaly(event: AnomalyEvent): string {
  const named = event.accountId === '' ? 'no account it could read' : `account ${JSON.stringify(event.accountId)}`;
  const outcome = event.action === 'resent'
    ? 'the records it did not name were sent again'
    : 'it gave the same answer to them sent again, so they were rejected';
  return `the service refused a request of batch ${event.batch} (${event.records} records) naming ${named}, ` +
    `which was not in it (${event.errors.join('; ')}); ${outcome}`;
}
