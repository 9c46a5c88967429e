// The session: a logged-in client plus short helpers for exploring (REPL, notebooks). Helpers
// are arrow-function fields so they can be destructured (`const { rows } = session`) and put
// straight into a REPL context. Every helper that does I/O takes the caller's signal and the
// interrupt signal of the REPL (Ctrl-C), whichever aborts first.
import type { Readable } from 'node:stream';
import { inspect } from 'node:util';
import type { LenderClient } from '../client/client.ts';
import type { Connection } from '../connect.ts';
import type { DatasetRef, ExportRow } from '../core/types.ts';
import { checkOptionNames, type OptionNames } from '../core/option-names.ts';
import type { AccountWriterOptions } from '../accounts/account-writer.ts';
import type { RecordWriterOptions } from '../accounts/writer.ts';
import { EXPORT_OPTION_NAMES } from '../exports/export-options.ts';
import { exportPages, exportRows, type ExportOptions, type ExportPage } from '../exports/export-stream.ts';
import { fileState, type StateStore } from '../exports/state.ts';
import { openSink } from '../sinks/open-sink.ts';
import { DEFAULT_DUCKDB_FILE, parseSinkSpec } from '../sinks/sink-spec.ts';
import type { Sink } from '../sinks/sink.ts';
import { sync as syncDatasets, type DatasetSyncSummary, type SyncOptions } from '../sinks/sync.ts';
import { chartModel, showChart, textChart, type ChartData, type ChartOptions } from './chart.ts';
import { countRows, codeOf, type CountOptions } from './count.ts';
import { pushRecords, flagRecords, type RecordSource } from './writes.ts';
import { CatalogView, Count, PageSummary, RowList, WriteResult } from './results.ts';
import { describeDataset, type Description, type DescribeOptions } from './describe.ts';
import { inTurn } from './file-turns.ts';
import { htmlTable } from './html.ts';
import { notebookDisplay } from './notebook.ts';
import { SecretValues } from './secrets.ts';
import { runSql, type QueryResult, type SqlOptions } from './sql.ts';
import { TextTable, type TableOptions } from './table.ts';

/** Who the session is logged in as, and where; what `whoami()` returns (never the password). */
export interface Identity {
  readonly authUrl: string;
  readonly lender: string;
  readonly email: string;
  readonly lenderPublicId: string;
  readonly sandbox: boolean;
}

/** The embedded sandbox as the session exposes it: no credentials, only the knobs. */
export interface SandboxHandle {
  readonly authUrl: string;
  readonly caFile: string;
  stats(): Record<string, number>;
  drain(): Promise<void>;
  advance(): { updated: number; inserted: number };
  /** Latency, fault rates, token lifetime, changed live (e.g. to try Ctrl-C on a slow call). */
  setFaults(patch: { latencyMs?: number; faults?: Record<string, number>; tokenTtlSeconds?: number }): object;
}

function sandboxHandle(sandbox: NonNullable<Connection['sandbox']>): SandboxHandle {
  return {
    authUrl: sandbox.authUrl,
    caFile: sandbox.caFile,
    stats: () => ({ ...sandbox.stats() }),
    drain: () => sandbox.drain(),
    advance: () => sandbox.advance(),
    setFaults: (patch) => sandbox.setFaults(patch),
  };
}

/** Options of `session.rows()`: the export options, and how many rows to return. */
export interface RowsOptions extends Omit<ExportOptions, 'limit' | 'state' | 'resume' | 'stateKey'> {
  /** Rows to return. Default 10. */
  limit?: number;
}

// The export options these helpers pass on: those of a load's state are not among them.
const { state: _state, resume: _resume, stateKey: _stateKey, ...READ_OPTION_NAMES } = EXPORT_OPTION_NAMES;
const ROWS_OPTION_NAMES: OptionNames<RowsOptions> = READ_OPTION_NAMES;

/** Options of `session.pages()`: the export options, how many pages to return and whether to keep empty ones. */
export interface PagesOptions extends Omit<ExportOptions, 'state' | 'resume' | 'stateKey'> {
  /** Pages to return. Default 1. */
  pages?: number;
  /** Also return empty pages (windows without rows). Default false. */
  includeEmpty?: boolean;
}

const PAGES_OPTION_NAMES: OptionNames<PagesOptions> = { ...READ_OPTION_NAMES, pages: true, includeEmpty: true };

/** Options of `session.sync()`: those of `sync`, with the sink and the state store also given as text. */
export interface SessionSyncOptions extends Omit<SyncOptions, 'state' | 'to'> {
  /** A sink, or where the rows go as `lender sync --to` takes it: `duckdb:FILE`, `ndjson:DIR`,
   * `postgres://…` (a sink given as text is closed after the sync). */
  to?: Sink | string;
  /** A state store, or the path of a JSON state file. Default <out>/.lender-state.json. */
  state?: StateStore | string;
}

export const DEFAULT_ROWS = 10;

/**
 * A logged-in session for exploring the service: the client, the live catalog and short helpers
 * (rows, pages, count, describe, stream, push, flag, sync, sql, table, chart) whose results print
 * readably, as text, or in a notebook as HTML tables and SVG charts.
 */
export class LenderSession {
  #client: LenderClient;
  #catalog: CatalogView;
  readonly #connection: Connection;
  readonly #sandbox: SandboxHandle | undefined;
  #interrupt: (() => AbortSignal | undefined) | undefined;
  #closed = false;

  constructor(connection: Connection, catalog: CatalogView) {
    this.#connection = connection;
    this.#client = connection.client;
    this.#catalog = catalog;
    this.#sandbox = connection.sandbox === undefined ? undefined : sandboxHandle(connection.sandbox);
  }

  /** The logged-in client (replaced by relogin()). */
  get client(): LenderClient {
    return this.#client;
  }

  /** The live catalog as read at open (or by refreshCatalog()). */
  get catalog(): CatalogView {
    return this.#catalog;
  }

  get sandbox(): SandboxHandle | undefined {
    return this.#sandbox;
  }

  /** Dataset codes of the live catalog, available or not (for completion). */
  get datasetCodes(): string[] {
    return this.#catalog.datasets().map((d) => d.code);
  }

  /** The REPL hands in the signal of the evaluation running now, aborted by Ctrl-C. */
  setInterruptSource(source: (() => AbortSignal | undefined) | undefined): void {
    this.#interrupt = source;
  }

  /** Secret values to keep out of history and outputs: strings to filters, [redacted] when printed. */
  knownSecrets(): SecretValues {
    return SecretValues.holding(this.#connection.secrets());
  }

  whoami = (): Identity => {
    const id: Identity = { ...this.#connection.identity, lenderPublicId: this.#client.lenderPublicId };
    return id;
  };

  refreshCatalog = async (opts: { signal?: AbortSignal } = {}): Promise<CatalogView> => {
    this.#catalog = new CatalogView(await this.#client.catalog({ signal: this.#signal(opts.signal) }));
    return this.#catalog;
  };

  /** Logs in again (new tokens) with the credentials the session was opened with. */
  relogin = async (opts: { signal?: AbortSignal } = {}): Promise<Identity> => {
    const fresh = await this.#connection.login(this.#signal(opts.signal));
    const old = this.#client;
    this.#client = fresh;
    await old.close();
    return this.whoami();
  };

  /** The first `limit` rows (default 10) of a dataset, as an array that prints as a table. */
  rows = async (dataset: DatasetRef, opts: RowsOptions = {}): Promise<RowList> => {
    checkOptionNames(opts, ROWS_OPTION_NAMES, 'rows()');
    const want = opts.limit ?? DEFAULT_ROWS;
    const { limit: _limit, ...rest } = opts;
    const out: ExportRow[] = [];
    if (want <= 0) return RowList.forDataset(codeOf(dataset), out);
    const stream = exportRows(this.#client, dataset, { ...rest, limit: Math.min(want, 1000), signal: this.#signal(opts.signal) });
    for await (const row of stream) {
      out.push(row as ExportRow);
      if (out.length >= want) break;
    }
    return RowList.forDataset(codeOf(dataset), out);
  };

  /** The first `pages` pages (default 1), each printed as a one-line summary. */
  pages = async (dataset: DatasetRef, opts: PagesOptions = {}): Promise<PageSummary[]> => {
    checkOptionNames(opts, PAGES_OPTION_NAMES, 'pages()');
    const want = opts.pages ?? 1;
    const { pages: _pages, includeEmpty: _empty, ...rest } = opts;
    const out: PageSummary[] = [];
    if (want <= 0) return out;
    for await (const page of exportPages(this.#client, dataset, { ...rest, signal: this.#signal(opts.signal) })) {
      // Windows before the data starts give empty pages; they say nothing worth showing.
      if ((page as ExportPage).rows.length === 0 && !opts.includeEmpty) continue;
      out.push(new PageSummary(page as ExportPage));
      if (out.length >= want) break;
    }
    return out;
  };

  /**
   * Rows in the dataset (includeTotal). Via datasets have no total without a time bound, so they
   * are counted per calendar month from the export origin and summed (`window` changes the span).
   */
  count = async (dataset: DatasetRef, opts: CountOptions = {}): Promise<Count> =>
    countRows(this.#client, dataset, { ...opts, signal: this.#signal(opts.signal) });

  /** The rows as a Readable (async-iterable), for pipelines and `for await`. */
  stream = (dataset: DatasetRef, opts: ExportOptions = {}): Readable =>
    exportRows(this.#client, dataset, { ...opts, signal: this.#signal(opts.signal) });

  /** Pushes account records (an array, an iterable, or an NDJSON/JSON file path). */
  push = async (records: RecordSource, opts: AccountWriterOptions = {}): Promise<WriteResult> =>
    pushRecords(this.#client, records, { ...opts, signal: this.#signal(opts.signal) });

  /** Sets disputed / do-not-contact flags (`status`: 5|6 or 'disputed'|'doNotContact'). */
  flag = async (records: RecordSource, opts: RecordWriterOptions = {}): Promise<WriteResult> =>
    flagRecords(this.#client, records, { ...opts, signal: this.#signal(opts.signal) });

  /** Initial-then-incremental load into `to` or `out` (default: every available dataset). */
  sync = async (datasets: readonly DatasetRef[] | DatasetRef | undefined, opts: SessionSyncOptions = {}): Promise<SyncResult> => {
    const list = datasets === undefined ? undefined : Array.isArray(datasets) ? datasets : [datasets as DatasetRef];
    // Neither `to` nor `out`: the DuckDB file `lender sync` and sql() use.
    const { state: stateOption, to: toOption = opts.out === undefined ? `duckdb:${DEFAULT_DUCKDB_FILE}` : undefined, ...rest } = opts;
    const state = typeof stateOption === 'string' ? fileState(stateOption) : stateOption;
    const spec = typeof toOption === 'string' ? parseSinkSpec(toOption) : undefined;
    const load = async (): Promise<SyncResult> => {
      const to = typeof toOption === 'string' ? await openSink(spec!, state !== undefined ? { state } : {}) : toOption;
      try {
        const summary = await syncDatasets(this.#client, list, {
          ...rest,
          ...(to !== undefined ? { to } : {}),
          ...(state !== undefined ? { state } : {}),
          signal: this.#signal(opts.signal),
        });
        return new SyncResult(summary);
      } finally {
        if (spec !== undefined) await to?.close();
      }
    };
    // A DuckDB file the session opens takes turns with its other calls on it (file-turns.ts).
    return spec?.kind === 'duckdb' ? inTurn(spec.path, load) : load();
  };

  /**
   * A dataset at a glance: its fields with their types, null share and distinct values among the
   * first `sample` rows (default 1000), the first and last values of its cursor field, and its row
   * count. Prints as a table; shown as an HTML table in a notebook.
   */
  describe = async (dataset: DatasetRef, opts: DescribeOptions = {}): Promise<Description> => {
    checkOptionNames(opts, { sample: true, signal: true }, 'describe()');
    const description = await describeDataset(this.#client, dataset, { ...opts, signal: this.#signal(opts.signal) });
    notebookDisplay()?.html(description.html());
    return description;
  };

  /**
   * A query on the DuckDB database sync writes (default ./lender.duckdb; `sync` into it first).
   * The rows print as a table, and are shown as an HTML table in a notebook.
   */
  sql = async (query: string, opts: SqlOptions = {}): Promise<QueryResult> => {
    checkOptionNames(opts, { database: true, signal: true }, 'sql()');
    const result = await runSql(query, { ...opts, signal: this.#signal(opts.signal) });
    notebookDisplay()?.html(result.html());
    return result;
  };

  /**
   * A table of rows (all fields, or the ones named): text here, returned to print; in a notebook
   * it is shown as an HTML table, and nothing is returned.
   */
  table = (rows: Iterable<object>, fields?: readonly string[], opts?: TableOptions): TextTable | undefined => {
    checkOptionNames(opts, { maxWidth: true, maxRows: true }, 'table()');
    const list = [...rows];
    const display = notebookDisplay();
    if (display === undefined) return new TextTable(list, fields, opts);
    display.html(htmlTable(list, fields, opts));
    return undefined;
  };

  /**
   * A chart of label → value pairs, of rows (`{ x, y, color, mark: 'bar' | 'line' }`), or a full
   * Vega-Lite spec. Text here, returned to print (a number as second argument: the bars' width);
   * in a notebook, an SVG is rendered and shown (await it), or, if it cannot be drawn, its error.
   */
  chart = (data: ChartData, opts?: ChartOptions | number): TextTable | Promise<void> => {
    if (typeof opts !== 'number') checkOptionNames(opts, { mark: true, x: true, y: true, color: true, title: true, textWidth: true }, 'chart()');
    const model = chartModel(data, typeof opts === 'number' ? { textWidth: opts } : opts);
    const display = notebookDisplay();
    if (display === undefined) return textChart(model);
    return showChart(display, model);
  };

  close = async (): Promise<void> => {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#client.close();
    } finally {
      // The embedded sandbox; the connection's client is closed by now, so that part does nothing.
      await this.#connection.close();
    }
  };

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #signal(own: AbortSignal | undefined): AbortSignal | undefined {
    const fromRepl = this.#interrupt?.();
    if (own === undefined) return fromRepl;
    if (fromRepl === undefined) return own;
    return AbortSignal.any([own, fromRepl]);
  }

  toJSON(): object {
    return { ...this.whoami(), datasets: this.#catalog.available() };
  }

  [inspect.custom](): string {
    const id = this.whoami();
    const where = id.sandbox ? 'embedded sandbox' : id.authUrl;
    return `LenderSession ${id.lender} (${id.email}) on ${where}; ${this.#catalog.available().length} datasets available`;
  }
}

/** Per-dataset outcome of sync(), printed as a table. */
export class SyncResult {
  constructor(readonly datasets: Readonly<Record<string, DatasetSyncSummary>>) {}

  toJSON(): object {
    return this.datasets;
  }

  [inspect.custom](): string {
    const rows = Object.values(this.datasets);
    return new TextTable(rows, ['dataset', 'mode', 'rows', 'pages', 'windows', 'splits', 'retries'], { maxRows: Infinity }).text;
  }
}
