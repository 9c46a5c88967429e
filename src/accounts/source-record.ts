// How a source tells the writer where a record came from, and that an input could not be read as
// a record at all. Both count as received, so the writer's totals still add up.

/** 1-based line of an NDJSON source, or 0-based element index of a JSON array. */
export interface SourcePosition {
  readonly line?: number;
  readonly element?: number;
}

/** A parsed record with its place in the source, so a reject can point back at it. */
export class SourceRecord {
  constructor(
    readonly value: unknown,
    readonly position: SourcePosition,
  ) {}
}

/** Input that is not a record: an NDJSON line that is not JSON, a line too long to hold. */
export class MalformedRecord {
  constructor(
    /** The text as read (shortened when long), for the rejects file. */
    readonly raw: string,
    readonly position: SourcePosition,
    /** One sentence: what is wrong and where. */
    readonly message: string,
  ) {}
}
