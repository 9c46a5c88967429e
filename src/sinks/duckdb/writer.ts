// The connection every write goes through. Each call into DuckDB is a round trip through Node's
// thread pool, which waits whenever the event loop is busy (parsing the next page, say), so a
// commit makes as few as it can: a transaction is always open (the COMMIT that ends one begins
// the next), and each table keeps its appender from one page to the next.
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';

export class Writer {
  readonly #conn: DuckDBConnection;
  /** Whether a transaction is open on the connection. */
  #open = false;
  /** Appenders by table, each for the columns it was made with. */
  readonly #appenders = new Map<string, { columns: string; appender: DuckDBAppender }>();
  readonly #beforeWrite: () => void;

  /** `beforeWrite` runs before any statement that may write to the database's log. */
  constructor(conn: DuckDBConnection, beforeWrite: () => void) {
    this.#conn = conn;
    this.#beforeWrite = beforeWrite;
  }

  get connection(): DuckDBConnection {
    return this.#conn;
  }

  /** Runs statements in the open transaction. */
  async run(statements: readonly string[]): Promise<void> {
    if (statements.length === 0 && this.#open) return;
    this.#beforeWrite();
    await this.#conn.run([...(this.#open ? [] : ['BEGIN TRANSACTION']), ...statements].join(';\n'));
    this.#open = true;
  }

  /** The table's appender, in the open transaction. `columns` names the column list it is for: an
   * appender made before a column was added cannot append to the table. */
  async appender(table: string, columns: string): Promise<DuckDBAppender> {
    await this.run([]);
    const held = this.#appenders.get(table);
    if (held?.columns === columns) return held.appender;
    this.#drop(table);
    const appender = await this.#conn.createAppender(table);
    this.#appenders.set(table, { columns, appender });
    return appender;
  }

  /** An appender to a temporary table made in the open transaction; the caller closes it. */
  async temporaryAppender(table: string): Promise<DuckDBAppender> {
    await this.run([]);
    return this.#conn.createAppender(table, 'main', 'temp');
  }

  /** Runs the statements and commits, and opens the next transaction. */
  async commit(statements: readonly string[]): Promise<void> {
    this.#beforeWrite();
    await this.#conn.run([...(this.#open ? [] : ['BEGIN TRANSACTION']), ...statements, 'COMMIT', 'BEGIN TRANSACTION'].join(';\n'));
    this.#open = true;
  }

  /** Undoes the open transaction, and forgets appenders that may hold rows of it. Whatever
   * failed may have begun a transaction or not: ROLLBACK without one is refused, harmlessly. */
  async rollback(): Promise<void> {
    for (const table of [...this.#appenders.keys()]) this.#drop(table);
    this.#open = false;
    await this.#conn.run('ROLLBACK').catch(() => undefined);
  }

  /** Ends the open transaction (it holds nothing: commit opened it) and closes the appenders. */
  async end(): Promise<void> {
    await this.rollback();
  }

  #drop(table: string): void {
    const held = this.#appenders.get(table);
    if (held === undefined) return;
    this.#appenders.delete(table);
    try {
      held.appender.clear();
      held.appender.closeSync();
    } catch {
      // An appender whose flush failed: nothing of it is kept.
    }
  }
}
