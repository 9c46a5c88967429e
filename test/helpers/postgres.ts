// A throwaway PostgreSQL cluster for the tests: initdb into a fresh temporary folder with
// password authentication (scram-sha-256, a random superuser password given through a file),
// listening on 127.0.0.1 only, on a free port. Usage:
//
//   const pg = await startPostgres();
//   after(() => pg.stop());
//   const db = await createDatabase(pg);   // a fresh database per test
//   ... postgresSink({ connectionString: db.url, env: db.env }) ...
//
// The server runs as the `postgres` system user when the tests run as root (initdb refuses root).
// fsync stays on: the crash tests rely on what a committed transaction promises. A watchdog
// process stops the server and removes its folder once the test process is gone, however it ended.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { chown, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** The superuser the cluster is made with (not the OS user: the tests never rely on peer auth). */
const SUPERUSER = 'lender_test';

export interface PgEnv extends NodeJS.ProcessEnv {
  PGHOST: string;
  PGPORT: string;
  PGUSER: string;
  PGPASSWORD: string;
  PGDATABASE: string;
}

export interface PgCluster {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** The PG* variables of the superuser and the `postgres` database. */
  env: PgEnv;
  /** postgres://user@host:port/database, never with the password. */
  url: string;
  /** Stops the server at once (immediate) and removes its folder. */
  stop(): Promise<void>;
}

export interface PgDatabase {
  database: string;
  url: string;
  env: PgEnv;
}

const INSTALL_HINT =
  'PostgreSQL server binaries (initdb, pg_ctl, postgres) were not found on PATH nor under /usr/lib/postgresql/*/bin. ' +
  'Install them with: apt-get update && apt-get install -y postgresql (Debian/Ubuntu), or set LENDER_PG_BINDIR to their folder.';

/** The folder holding initdb, pg_ctl and postgres: LENDER_PG_BINDIR, PATH, else Debian's newest
 * under /usr/lib/postgresql/<version>/bin. */
export function postgresBinDir(env: NodeJS.ProcessEnv = process.env, debian = '/usr/lib/postgresql'): string {
  const candidates: string[] = [];
  if (env.LENDER_PG_BINDIR !== undefined) candidates.push(env.LENDER_PG_BINDIR);
  for (const dir of (env.PATH ?? '').split(':')) if (dir !== '') candidates.push(dir);
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(join(debian, v, 'bin'));
  }
  for (const dir of candidates) {
    if (['initdb', 'pg_ctl', 'postgres'].every((bin) => existsSync(join(dir, bin)))) return dir;
  }
  throw new Error(INSTALL_HINT);
}

/** When we are root, the cluster's files and processes belong to this user. */
interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

function runAsUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (line === undefined) throw new Error(`tests run as root and there is no 'postgres' user for the cluster. ${INSTALL_HINT}`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid), name: 'postgres' };
}

/** Runs a server binary, as the cluster's user when we are root. */
async function runBin(bin: string, args: string[], as: RunAs | undefined): Promise<{ stdout: string; stderr: string }> {
  const [file, argv] = as === undefined ? [bin, args] : ['runuser', ['-u', as.name, '--', bin, ...args]];
  return run(file, argv, { timeout: 60_000 });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Servers started by this process and not stopped yet, by postmaster pid: stopped on exit. */
const running = new Map<number, string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const [pid, dir] of running) {
      try {
        process.kill(pid, 'SIGQUIT'); // immediate shutdown
      } catch {
        // already gone
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/**
 * A detached shell that waits for this process to end, then stops the postmaster and removes the
 * folder: a test process killed with SIGKILL (no exit hook runs) leaves no server behind.
 */
function startWatchdog(postmaster: number, dir: string): number | undefined {
  const script = `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${postmaster} 2>/dev/null; do sleep 1; done; ` +
    `kill -QUIT ${postmaster} 2>/dev/null; sleep 2; kill -KILL ${postmaster} 2>/dev/null; rm -rf '${dir}'`;
  const child = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid;
}

function postmasterPid(dataDir: string): number {
  return Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

export interface StartOptions {
  /** Where the port to try next comes from (tests of the port race); default a free port. */
  nextPort?: () => Promise<number>;
}

export async function startPostgres(opts: StartOptions = {}): Promise<PgCluster> {
  const bin = postgresBinDir();
  const nextPort = opts.nextPort ?? freePort;
  const as = runAsUser();
  const dir = await mkdtemp(join(tmpdir(), 'lender-pg-'));
  installExitHook();
  try {
    if (as !== undefined) await chown(dir, as.uid, as.gid);
    const dataDir = join(dir, 'data');
    const password = randomBytes(18).toString('base64url');
    // The password reaches initdb through a file, never a command line (visible in ps).
    const pwfile = join(dir, 'pwfile');
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (as !== undefined) await chown(pwfile, as.uid, as.gid);
    await runBin(join(bin, 'initdb'), [
      '-D', dataDir, '-U', SUPERUSER, '--auth=scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8', '--locale=C', '--no-sync',
    ], as);
    rmSync(pwfile, { force: true });
    const socketDir = dataDir; // owned by the cluster's user, inside the temporary folder
    const conf = [
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${socketDir}'`,
      'max_connections = 60',
      'shared_buffers = 128MB',
      // Kept on (the defaults, spelled out): the crash tests rely on committed meaning durable.
      'fsync = on',
      'synchronous_commit = on',
      'full_page_writes = on',
      'wal_level = minimal',
      'max_wal_senders = 0',
      "log_min_messages = 'warning'",
    ];
    await writeFile(join(dataDir, 'postgresql.conf'), `\n# lender-streams tests\n${conf.join('\n')}\n`, { flag: 'a' });

    // Another process may take the port between our probe and the server's bind: try another.
    let lastError: unknown;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const port = await nextPort();
      try {
        await runBin(join(bin, 'pg_ctl'), ['-D', dataDir, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', `-p ${port}`, 'start'], as);
      } catch (error) {
        lastError = error;
        const log = existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8') : '';
        if (/could not bind|Address already in use|could not create any TCP\/IP sockets/i.test(log)) continue;
        throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${log}`);
      }
      const pid = postmasterPid(dataDir);
      running.set(pid, dir);
      const watchdog = startWatchdog(pid, dir);
      const host = '127.0.0.1';
      const database = 'postgres';
      let stopped = false;
      return {
        host, port, user: SUPERUSER, password, database,
        env: { PGHOST: host, PGPORT: String(port), PGUSER: SUPERUSER, PGPASSWORD: password, PGDATABASE: database },
        url: `postgres://${SUPERUSER}@${host}:${port}/${database}`,
        async stop() {
          if (stopped) return;
          stopped = true;
          try {
            await runBin(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop'], as);
          } catch {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              // already gone
            }
          }
          running.delete(pid);
          if (watchdog !== undefined) {
            try {
              process.kill(watchdog, 'SIGTERM');
            } catch {
              // already gone
            }
          }
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    throw new Error(`PostgreSQL found no free port after 5 tries: ${(lastError as Error).message}`);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Runs SQL as the cluster's superuser on one of its databases (default `postgres`). */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(
  cluster: PgCluster, sql: string, params: unknown[] = [], database = cluster.database,
): Promise<pg.QueryResult<R>> {
  const client = new pg.Client({ host: cluster.host, port: cluster.port, user: cluster.user, password: cluster.password, database });
  await client.connect();
  try {
    return await client.query<R>(sql, params);
  } finally {
    await client.end();
  }
}

/** A new, empty database in the cluster, with its URL (no password) and PG* variables. */
export async function createDatabase(cluster: PgCluster, name = `t_${randomBytes(6).toString('hex')}`): Promise<PgDatabase> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  await adminQuery(cluster, `CREATE DATABASE ${name}`);
  return {
    database: name,
    url: `postgres://${cluster.user}@${cluster.host}:${cluster.port}/${name}`,
    env: { ...cluster.env, PGDATABASE: name },
  };
}

/**
 * How many TCP connections this process holds open to `port` on this machine: its socket
 * descriptors (/proc/self/fd) matched with the kernel's table of connections (/proc/net/tcp, tcp6).
 */
export function connectionsTo(port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  let count = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const remotePort = Number.parseInt(fields[2]!.split(':')[1]!, 16);
      if (remotePort === port && inodes.has(fields[9]!)) count += 1;
    }
  }
  return count;
}

