// A DuckDB database file opened for writing by one sink. DuckDB itself locks the file against
// other processes, but not against a second open in the same process (its lock is a POSIX record
// lock, which is per process), so files open here are also claimed in a process-wide set. The
// file and its write-ahead log hold personal data: both are owner-only before DuckDB writes rows
// to them (DuckDB creates files with the umask's mode, and deletes the log at each checkpoint).
// @duckdb/node-api is imported only here, lazily: importing the library never loads native code.
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { closeSync, existsSync, fchmodSync, openSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { chmod, link, mkdir, mkdtemp, open, realpath, rm, stat } from 'node:fs/promises';
import { hostname, totalmem } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { collectGarbage } from '../../core/collect-garbage.ts';
import { firstLineOf } from '../../core/errors.ts';
import { aboutFile, FileError } from '../../core/file-errors.ts';
import { makeFolder } from '../../core/make-folder.ts';
import { PRIVATE_MODE } from '../../core/private-files.ts';
import { processAlive } from '../../exports/lock-holder.ts';
import { acquireStateLock, StateLockedError, type StateLock } from '../../exports/state-lock.ts';
import { siblingsMatching } from '../../exports/temp-siblings.ts';
import { SinkError } from '../errors.ts';
import { stateTableSql } from './sql.ts';
import { Writer } from './writer.ts';

/** Another process (or another sink of this process) has the database file open. */
export class DuckDbLockedError extends SinkError {
  override name = 'DuckDbLockedError';
  readonly path: string;
  /** The holder: this process (another sink), or another process, by pid when DuckDB named it. */
  readonly holder: { thisProcess: true } | { thisProcess: false; pid: number | undefined };
  /** `options.message`: the refusal in other words (one that happened in the middle of a load). */
  constructor(path: string, holder: DuckDbLockedError['holder'], options: { cause?: unknown; message?: string } = {}) {
    super(options.message ?? (holder.thisProcess
      ? `${path} is already open in this process (a sync or query still running, or a DuckDB sink not closed); ` +
        'wait for it to end, or close that sink, before opening the file again.'
      : `${path} is open in another process${holder.pid === undefined ? '' : ` (pid ${holder.pid})`}: a DuckDB file has ` +
        'one writer at a time; wait for that run to end, or sync into another file.'),
    { cause: options.cause });
    this.path = path;
    this.holder = holder;
  }
}

export interface Database {
  readonly path: string;
  /** The connection every write goes through (it makes the log owner-only before each). */
  readonly writer: Writer;
  /** A second connection for queries: it sees committed rows only, whatever the writer is doing. */
  reader(): Promise<DuckDBConnection>;
  /** Raises DuckDB's memory limit to `memoryMb` (see memoryLimitMb), if it is lower, and at most
   * to memoryCeilingMb; true when it was raised. It is never lowered while the database is open. */
  fitMemory(memoryMb: number): Promise<boolean>;
  /** DuckDB's memory limit now, in MB. */
  readonly memoryMb: number;
  /** Runs `read` on a connection of its own, closed after (what it reads is committed, and a
   * failure there leaves the writer's transaction alone). */
  withConnection<T>(read: (conn: DuckDBConnection) => Promise<T>): Promise<T>;
  /** Counts what a commit wrote, towards the next reopening. */
  wrote(rows: number, characters: number): void;
  /**
   * Closes DuckDB and opens the file again, between two commits, once the commits since it opened
   * wrote `reopenAfterRows` rows or REOPEN_AFTER_CHARACTERS of text (see REOPEN_AFTER_ROWS for
   * why). Never once the reader was asked for (its connection may hold what a query made:
   * temporary tables, settings), nor while a lent connection is open. `sharedMeanwhile`: another
   * process had the file in between, and may have written to it. On failure the database is
   * closed (the pages committed are in it).
   */
  reopenIfDue(): Promise<{ sharedMeanwhile: boolean }>;
  /** Checkpoints (so the file holds everything and the log is gone) and closes; `before` runs
   * first, while a sink of this process that opens the file waits for the close to end. */
  close(before?: () => Promise<void>): Promise<void>;
}

// One thread: pages are small, and DuckDB's worker threads only add hand-offs (and memory) to
// them. Queries through the sink run on that thread too.
// A checkpoint every 48 MB of log rather than 16: each one compresses the last row group again
// with what was appended since, so fewer of them cost less (on 1,000,000 rows of D07: about a
// tenth of the sink's CPU time), and the rows they hold meanwhile may be written out to the
// temporary folder rather than kept in memory.
const SETTINGS: Record<string, string> = { threads: '1', checkpoint_threshold: '48MB' };

// The memory limit. Within it the blocks of the tables are cached and rows not yet checkpointed
// held; beyond it DuckDB evicts blocks (the checkpointed ones cost nothing to evict) and writes
// the others to its temporary folder, owner-only (see privateTempDir). Without a limit DuckDB
// keeps every block it read or wrote, some 80% of the machine's memory at most.
// A commit and a checkpoint pin blocks of every column of a table at once: short of memory for
// them, the commit fails ("failed to pin block"), or the checkpoint does, which ends the
// database's use in this process. With 1,000,000 rows committed 5,000 at a time, 1.5 MB a column
// was enough for tables of 24 to 100 columns, and a table of 12 needed 20 MB (16 failed): so 2 MB
// a column of the widest table written, and 32 MB at least (what 16 columns or fewer get).
// Large values take memory in proportion: pages of 1,000 rows of 20 kB of text did not fit in
// 32 MB, nor of 50 kB in 64 MB, and pages of 40 to 120 MB of text needed up to about three times
// as much (a checkpoint of 120 MB in 60 columns, over 250 MB): so 3 MB for each million
// characters of the page's text.
const MIN_MEMORY_MB = 32;
const MEMORY_MB_PER_COLUMN = 2;
const MEMORY_MB_PER_MILLION_CHARACTERS = 3;

// DuckDB keeps memory in proportion to what was appended since it opened the file, beyond its
// memory limit and beyond what it counts (duckdb_memory()), and gives it back only when closed:
// 1,000,000 D07 rows appended in commits of 5,000 left the process some 45 MB above what closing
// DuckDB brought it down to. So a load closes DuckDB and opens the file again after every
// 100,000 rows (REOPEN_AFTER_ROWS, the sink's `reopenAfterRows`) or 16 million characters of text
// (about as many D07 rows), which held a sync of 1,000,000 D07 rows some 20 MB lower for no
// measurable time (docs/benchmarks.md). DuckDB's lock on the file is let go meanwhile: another
// process that takes it then is waited for (REOPEN_WAIT_MS).
export const REOPEN_AFTER_ROWS = 100_000;
const REOPEN_AFTER_CHARACTERS = 16_000_000;

/** DuckDB's memory limit for a page of `textLength` characters of text into a table of
 * `columns` columns, in MB. */
export function memoryLimitMb(columns: number, textLength = 0): number {
  return Math.ceil(Math.max(MIN_MEMORY_MB, columns * MEMORY_MB_PER_COLUMN, (textLength / 1e6) * MEMORY_MB_PER_MILLION_CHARACTERS));
}

/** The most memory a sink gives DuckDB, in MB (DuckDB's: 10^6 bytes): half of what the process
 * may use (its container's limit, when it has one), never under the least limit. */
function memoryCeilingMb(): number {
  const machine = totalmem();
  const allowed = process.constrainedMemory?.() ?? 0;
  return Math.max(MIN_MEMORY_MB, Math.floor((allowed > 0 && allowed < machine ? allowed : machine) / 2 / 1e6));
}

// Shared by every copy of this module a process may load (sources and build alike).
// A file's claim is held while a sink of this process has it, from the start of its opening to
// the end of its close. Another sink that opens the file meanwhile is refused, unless the holder
// is closing (the REPL's next call, after Ctrl-C stopped one): then it waits for `released`.
// Closing counts from the moment the holder's close is asked for, even while it is still opening
// the file. (".3": the entries had other shapes before.)
interface Claim {
  closing: boolean;
  readonly released: Promise<void>;
}
const OPEN_FILES: Map<string, Claim> = ((globalThis as Record<symbol, unknown>)[Symbol.for('lender-streams.duckdb-open-files.3')] ??=
  new Map<string, Claim>()) as Map<string, Claim>;

/** For tests: `afterClose` runs while a reopening has DuckDB closed; `waitMs` replaces
 * REOPEN_WAIT_MS. */
export const reopenHooks: { afterClose?: (file: string) => Promise<void>; waitMs?: number } = {};

export interface OpenDatabaseOptions {
  /** Rows committed between two reopenings (REOPEN_AFTER_ROWS); 0: never. */
  reopenAfterRows?: number;
  /** A full garbage collection of the JS heap before each checkpoint (collect-garbage.ts). */
  collectGarbage?: boolean;
  /** Aborted when the caller's close is asked for, maybe before this open ends: from then on a
   * sink of this process that opens the file waits for the close instead of being refused. */
  closing?: AbortSignal;
}

/** Opens (creating it, and its folder, if missing) the database file for writing. */
export async function openDatabase(path: string, opts: OpenDatabaseOptions = {}): Promise<Database> {
  const { reopenAfterRows = REOPEN_AFTER_ROWS, collectGarbage: collecting = false, closing } = opts;
  const file = resolve(path);
  await makeFolder(dirname(file));
  // The claim names the file whatever path led to it (a symlinked folder, a relative path).
  const claim = join(await realpath(dirname(file)), basename(file));
  for (let held = OPEN_FILES.get(claim); held !== undefined; held = OPEN_FILES.get(claim)) {
    if (!held.closing) throw new DuckDbLockedError(file, { thisProcess: true });
    await held.released;
  }
  let release!: () => void;
  const own: Claim = { closing: closing?.aborted ?? false, released: new Promise<void>((resolve) => (release = resolve)) };
  const markClosing = () => {
    own.closing = true;
  };
  closing?.addEventListener('abort', markClosing, { once: true });
  OPEN_FILES.set(claim, own);
  const unclaim = () => {
    closing?.removeEventListener('abort', markClosing);
    if (OPEN_FILES.get(claim) === own) OPEN_FILES.delete(claim);
    release();
  };
  let opened: Opened | undefined;
  let runLock: StateLock | undefined;
  let memoryMb = MIN_MEMORY_MB;
  const ceiling = memoryCeilingMb();
  try {
    runLock = await lockRun(file);
    // At every open, not only when making a file: a process killed between the link and the
    // removal left a folder holding a second link to the database.
    await removeOrphanNewDirs(file);
    if (!existsSync(file)) await createPrivately(file);
    else await refuseOtherFiles(file);
    opened = await connect(file, await createInstance(file, memoryMb, ceiling));
    await makePrivate(file);
    await makePrivate(walOf(file));
    await privateTempDir(file);
    ensureLog(file);
    await opened.conn.run(stateTableSql());
  } catch (error) {
    opened?.conn.closeSync();
    opened?.instance.closeSync();
    await runLock?.release();
    unclaim();
    if (error instanceof SinkError) throw error;
    throw new SinkError(error instanceof FileError ? error.message : `DuckDB could not open ${file}: ${firstLineOf(error)}`, { cause: error });
  }
  let { instance: db, conn } = opened;
  let pages = new Writer(conn, () => ensureLog(file));
  let closed = false;
  /** The reader's connection, once asked for: from then on the database is never reopened. */
  let reader: Promise<DuckDBConnection> | undefined;
  /** Connections lent by withConnection and fitMemory, open now. */
  let lent = 0;
  /** A reopening under way: every other use of DuckDB waits for it. */
  let reopening: Promise<unknown> | undefined;
  let written = { rows: 0, characters: 0 };

  const lend = async <T>(use: (conn: DuckDBConnection) => Promise<T>): Promise<T> => {
    // Counted before any await, so that no reopening begins before this connection is made.
    lent += 1;
    try {
      await reopening;
      const own = await db.connect();
      try {
        return await use(own);
      } finally {
        own.closeSync();
      }
    } finally {
      lent -= 1;
    }
  };
  const fitMemory = async (wanted: number): Promise<boolean> => {
    const needed = Math.min(ceiling, wanted);
    if (needed <= memoryMb) return false;
    // On a connection of its own: the writer's may be in a commit (the limit is the database's).
    await lend((own) => own.run(`SET memory_limit = '${needed}MB'`));
    memoryMb = needed;
    return true;
  };
  /** Closes DuckDB and opens the file again; true when another process had the file meanwhile. */
  // Done here, asynchronously: closing would otherwise checkpoint on the event loop's thread. A
  // checkpoint compresses what was appended since the last one, DuckDB's largest need for memory
  // in a load: the JS heap's garbage is collected first, when asked (the sink's collectGarbage).
  const checkpoint = async (): Promise<void> => {
    if (collecting) collectGarbage();
    await conn.run('CHECKPOINT');
  };
  const reopenNow = async (): Promise<boolean> => {
    try {
      await pages.end();
      await checkpoint();
    } catch (error) {
      throw new SinkError(`DuckDB could not checkpoint ${file} before opening it again: ${firstLineOf(error)}; ` +
        'the pages committed until then are kept.', { cause: error });
    }
    conn.closeSync();
    db.closeSync();
    await reopenHooks.afterClose?.(file);
    const waitMs = reopenHooks.waitMs ?? REOPEN_WAIT_MS;
    const again = await reopen(file, memoryMb, ceiling, waitMs).catch((error: unknown) => {
      throw reopenError(file, error, waitMs);
    });
    ({ instance: db, conn } = await connect(file, again.instance));
    pages = new Writer(conn, () => ensureLog(file));
    return again.waited;
  };
  const shutDown = async (): Promise<void> => {
    closed = true;
    const readerConn = await reader?.catch(() => undefined);
    for (const one of [readerConn, conn, db]) {
      try {
        one?.closeSync();
      } catch {
        // Closed already (by a reopening that failed after closing).
      }
    }
    removeEmptyLog(file);
    removeEmptyTempDir(file);
    await runLock!.release();
    unclaim();
  };

  return {
    path: file,
    get writer() {
      return pages;
    },
    reader() {
      // Set before any await: no reopening begins once a query asked for it.
      reader ??= (async () => {
        await reopening;
        // Shut down meanwhile: by close(), or by a reopening that could not open the file again.
        if (closed) throw new SinkError(`DuckDB closed ${file} before the query could run; run it again.`);
        return db.connect();
      })().catch((error: unknown) => {
        reader = undefined;
        throw error;
      });
      return reader;
    },
    get memoryMb() {
      return memoryMb;
    },
    fitMemory,
    withConnection: lend,
    wrote(rows, characters) {
      written.rows += rows;
      written.characters += characters;
    },
    async reopenIfDue() {
      const due = reopenAfterRows > 0 && (written.rows >= reopenAfterRows || written.characters >= REOPEN_AFTER_CHARACTERS);
      // Checked and marked before any await: a query or a lent connection arriving meanwhile
      // waits for the reopening, one already there keeps the database open.
      if (!due || closed || reopening !== undefined || reader !== undefined || lent > 0) return { sharedMeanwhile: false };
      const running = reopenNow();
      reopening = running.catch(() => undefined);
      try {
        const sharedMeanwhile = await running;
        written = { rows: 0, characters: 0 };
        return { sharedMeanwhile };
      } catch (error) {
        // Whatever failed, the rows committed so far are in the file, with their state.
        await shutDown();
        throw error;
      } finally {
        reopening = undefined;
      }
    },
    async close(before) {
      if (closed) return;
      closed = true;
      own.closing = true;
      try {
        await before?.();
        await reopening;
        await pages.end();
        await checkpoint().catch(() => undefined);
      } finally {
        await shutDown();
      }
    },
  };
}

interface Opened {
  instance: DuckDBInstance;
  conn: DuckDBConnection;
}

async function connect(file: string, instance: DuckDBInstance): Promise<Opened> {
  try {
    return { instance, conn: await instance.connect() };
  } catch (error) {
    instance.closeSync();
    throw new SinkError(`DuckDB could not connect to ${file}: ${firstLineOf(error)}`, { cause: error });
  }
}

/** Why the file could not be opened again, in the words of the run that had it. */
function reopenError(file: string, error: unknown, waitedMs: number): Error {
  const moment = 'while this run had it closed for a moment to give back DuckDB\'s memory';
  if (error instanceof DuckDbLockedError && !error.holder.thisProcess) {
    const pid = error.holder.pid === undefined ? '' : ` (pid ${error.holder.pid})`;
    return new DuckDbLockedError(file, error.holder, {
      cause: error,
      message: `${file}: another process${pid} opened it ${moment}, and still had it ${waitedMs / 1000} s later; ` +
        'the pages committed until then are kept: run again once that process is done.',
    });
  }
  return new SinkError(`DuckDB could not open ${file} again ${moment}: ${firstLineOf(error)}; ` +
    'the pages committed until then are kept.', { cause: error });
}

// Another program may open the file in the moment DuckDB lets go of it (a query in DuckDB's own
// shell, another run of this library): the sink waits for it to close the file again, this long
// at most, so that a stop asked for meanwhile is not held up much longer.
const REOPEN_WAIT_MS = 10_000;
const REOPEN_POLL_MS = 100;

/** createInstance again after a reopening's close, waiting up to `waitMs` while another process
 * has the file; `waited`: it had. */
export async function reopen(file: string, memoryMb: number, ceiling: number, waitMs = REOPEN_WAIT_MS): Promise<{ instance: DuckDBInstance; waited: boolean }> {
  const until = Date.now() + waitMs;
  for (let waited = false; ; waited = true) {
    try {
      return { instance: await createInstance(file, memoryMb, ceiling), waited };
    } catch (error) {
      if (!(error instanceof DuckDbLockedError) || Date.now() >= until) throw error;
      await delay(REOPEN_POLL_MS);
    }
  }
}

/**
 * DuckDB on the file with a memory limit of `memoryMb`. Opening replays the log a crash left,
 * whose rows must fit as a commit's do: a log of pages too large for that limit is replayed with
 * eight times as much (up to the ceiling) and checkpointed into the file while DuckDB has it, and
 * the limit is then set back.
 */
async function createInstance(file: string, memoryMb: number, ceiling: number): Promise<DuckDBInstance> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  for (let limit = memoryMb; ; limit = Math.min(ceiling, limit * 8)) {
    let instance: DuckDBInstance | undefined;
    try {
      instance = await DuckDBInstance.create(file, { ...SETTINGS, memory_limit: `${limit}MB` });
      if (limit > memoryMb) {
        await privateTempDir(file);
        const conn = await instance.connect();
        try {
          await conn.run('CHECKPOINT');
          await conn.run(`SET memory_limit = '${memoryMb}MB'`);
        } finally {
          conn.closeSync();
        }
      }
      return instance;
    } catch (error) {
      instance?.closeSync();
      if (limit >= ceiling || !isShortOfMemory(error)) throw openError(file, error);
    }
  }
}

/** DuckDB's refusal of memory beyond its limit, in a statement or in the checkpoint a commit runs
 * (that one FATAL: the database is then unusable until opened again). */
export function isShortOfMemory(error: unknown): boolean {
  return /^Out of Memory Error|failed to pin block|could not allocate block/.test(firstLineOf(error));
}

export function walOf(file: string): string {
  return `${file}.wal`;
}

/** Whether the SQL is one SELECT, which writes nothing (prepared, not run). */
export async function isOneSelect(conn: DuckDBConnection, sql: string): Promise<boolean> {
  try {
    const statements = await conn.extractStatements(sql);
    if (statements.count !== 1) return false;
    const { StatementType } = await import('@duckdb/node-api');
    return (await statements.prepare(0)).statementType === StatementType.SELECT;
  } catch {
    return false;
  }
}


/** DuckDB's refusal to lock the file becomes a DuckDbLockedError naming the file and its holder. */
export function openError(file: string, error: unknown): Error {
  const message = firstLineOf(error);
  if (message.includes('Could not set lock on file')) {
    const pid = /\(PID (\d+)\)/.exec(message)?.[1];
    return new DuckDbLockedError(file, { thisProcess: false, pid: pid === undefined ? undefined : Number(pid) }, { cause: error });
  }
  if (message.includes('not a valid DuckDB database file')) return notADatabase(file, error);
  return new SinkError(`DuckDB could not open ${file}: ${message}`, { cause: error });
}

/**
 * One run of this library at a time per file, also in the moments a reopening lets go of
 * DuckDB's own lock (where a second run would otherwise get in, and the two load in turns):
 * `<file>.lock` names the holder, and one whose process is gone on this host is taken over
 * (state-lock.ts). Other programs (DuckDB's shell) know only DuckDB's lock.
 */
async function lockRun(file: string): Promise<StateLock> {
  try {
    return await acquireStateLock(`${file}.lock`, file);
  } catch (error) {
    if (!(error instanceof StateLockedError)) throw error;
    const holder = error.holder;
    const here = holder !== undefined && holder.host === hostname();
    // A holder on this host is named as DuckDB's refusal names one; the others as the lock says.
    throw new DuckDbLockedError(file, { thisProcess: false, pid: holder?.pid }, { cause: error, ...(!here && { message: error.message }) });
  }
}

function notADatabase(file: string, cause?: unknown): SinkError {
  return new SinkError(`${file} exists but is not a DuckDB database; choose another path for the sync.`, { cause });
}

/**
 * Refuses a file that is not a DuckDB database before DuckDB opens it (or this module makes it
 * owner-only): DuckDB opens a CSV, JSON or Parquet file as an in-memory database with a view of
 * it, where a sync would load every row, keep none, and report success. DuckDB's files carry
 * "DUCK" 8 bytes in, after a checksum.
 */
async function refuseOtherFiles(file: string): Promise<void> {
  const head = Buffer.alloc(12);
  const { bytesRead } = await aboutFile('read', file, async () => {
    const handle = await open(file, 'r');
    try {
      return await handle.read(head, 0, head.length, 0);
    } finally {
      await handle.close();
    }
  });
  if (bytesRead < head.length || head.toString('latin1', 8, 12) !== 'DUCK') throw notADatabase(file);
}

/** link() refused by a filesystem without hard links (FAT, many network and FUSE ones). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/**
 * A new, empty database at `file`, owner-only from the moment it is there: made in a folder only
 * the owner can enter, then linked into place (DuckDB would create it with the umask's mode, and a
 * handle opened before a chmod outlives it; nor does DuckDB take an empty file as a database).
 * A file another process made meanwhile is left to it. Where the filesystem has no hard links,
 * DuckDB creates the file itself and it is made owner-only just after, as the caller does anyway.
 */
async function createPrivately(file: string): Promise<void> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const dir = await aboutFile('create', file, () => mkdtemp(join(dirname(file), `${NEW_DIR_PREFIX}${process.pid}-`)));
  try {
    const fresh = join(dir, basename(file));
    (await DuckDBInstance.create(fresh, SETTINGS)).closeSync();
    await chmod(fresh, PRIVATE_MODE);
    await link(fresh, file).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST' && !NO_HARD_LINKS.has(error.code ?? '')) throw error;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The private folders new databases are made in, beside them: `.lender-new-<pid>-XXXXXX`. */
const NEW_DIR_PREFIX = '.lender-new-';
/** Making a database there takes moments: a folder a minute old whose process is gone is an
 * orphan (a minute, for a process this one cannot see, in another container sharing the folder),
 * and so is one an hour old, whoever made it. */
const NEW_DIR_DEAD_MS = 60 * 1000;
const NEW_DIR_ORPHAN_MS = 60 * 60 * 1000;

/** Removes the folders of processes killed while they made a database; never fails the sync. */
async function removeOrphanNewDirs(file: string): Promise<void> {
  for (const { path, match } of await siblingsMatching(file, NEW_DIR_PREFIX, /^(\d+)-[^/]{6}$/)) {
    try {
      const age = Date.now() - (await stat(path)).mtimeMs;
      const orphan = age > NEW_DIR_ORPHAN_MS || (age > NEW_DIR_DEAD_MS && !processAlive(Number(match[1])));
      if (orphan) await rm(path, { recursive: true, force: true });
    } catch {
      // Gone meanwhile, or not ours to remove: left as it is.
    }
  }
}

/** chmod 0600 if the file exists and is ours (in a shared folder its owner decides). */
async function makePrivate(path: string): Promise<void> {
  try {
    await chmod(path, PRIVATE_MODE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'EPERM') throw error;
  }
}

/** DuckDB's temporary folder for the file (its default, `<file>.tmp`): where blocks that do not
 * fit in its memory limit go, rows included. Made owner-only before DuckDB uses it: DuckDB would
 * make it with the umask's mode. One that exists already (and is ours) is made owner-only. */
async function privateTempDir(file: string): Promise<void> {
  const dir = `${file}.tmp`;
  await mkdir(dir, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  try {
    await chmod(dir, 0o700);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
  }
}

/** The temporary folder, once DuckDB has removed what it wrote there. */
function removeEmptyTempDir(file: string): void {
  try {
    rmdirSync(`${file}.tmp`);
  } catch {
    // Not empty (left by a run killed while it spilled; DuckDB reuses it), or not there.
  }
}

/** The empty log ensureLog made after DuckDB's last checkpoint had removed the previous one:
 * DuckDB, with nothing more to write, leaves it. */
function removeEmptyLog(file: string): void {
  try {
    if (statSync(walOf(file)).size === 0) unlinkSync(walOf(file));
  } catch {
    // Gone already, or not ours to remove: an empty log is harmless.
  }
}

/** Creates the write-ahead log empty and owner-only when it is missing: DuckDB then writes into
 * that file instead of creating one with the umask's mode. Synchronous: a stat when the log is
 * there, which it is but after a checkpoint, and no round trip through the thread pool. */
function ensureLog(file: string): void {
  const wal = walOf(file);
  if (existsSync(wal)) return;
  let fd: number;
  try {
    fd = openSync(wal, 'wx', PRIVATE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw error;
  }
  try {
    // The mode given at creation is cut by the umask.
    fchmodSync(fd, PRIVATE_MODE);
  } finally {
    closeSync(fd);
  }
}
