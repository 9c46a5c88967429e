// `lender sandbox`: serves the sandbox over HTTPS until SIGINT/SIGTERM. The first stdout line
// is one JSON object scripts rely on (docs/sandbox.md); everything meant for people goes to stderr.
// With --env, stdout holds shell `export` lines instead (sandbox-env.ts).
import { fstatSync } from 'node:fs';
import { integerFlag, numberFlag, parseCommandArgs } from '../args.ts';
import { CommandFailure, EXIT, UsageError, type Command, type CommandIo } from '../command.ts';
import { isDatasetCode, type DatasetCode } from '../../core/catalog.ts';
import { ownField } from '../../core/own-fields.ts';
import { DEFAULT_OPTIONS, resolveOptions, SandboxOptionsError } from '../../sandbox/options.ts';
import { FaultSpecError, formatFaultSpec, parseFaultSpec } from '../../sandbox/faults-spec.ts';
import type { SandboxOptions } from '../../sandbox/contracts.ts';
import { envFilePath, exportLines, readRunningEnv, removeEnvFile, unsetLine, writeEnvFile } from '../sandbox-env.ts';

const help = `Usage: lender sandbox [options]

Serve the sandbox service over HTTPS (self-signed certificate made at start) until
SIGINT/SIGTERM, its normal end (exit 0). The first stdout line is one JSON object:
  {"authUrl","baseUrl","caFile","lenders":[{"lender","email","password","lenderPublicId"},...]}
with the lenders demo and other. Trust caFile as a CA (e.g. curl --cacert <caFile>).

Options:
  --port N          port to listen on; 0 picks a free one (default ${DEFAULT_OPTIONS.port})
  --host H          address to bind (default ${DEFAULT_OPTIONS.host})
  --seed N          seed of all generated data; same seed and scale, same data (default ${DEFAULT_OPTIONS.seed})
  --scale N         rows per generated dataset (D26: at most 200), and sub-accounts of the seeded
                    portfolio (at most 20,000), which D01, D02, D03 and D05 derive their rows
                    from (default ${DEFAULT_OPTIONS.scale})
  --latency MS      delay added to every service request (default ${DEFAULT_OPTIONS.latencyMs})
  --faults LIST     injected failures per request, KIND=RATE list, KIND one of
                    429 (with Retry-After: 1), 500, 503, 504, reset (socket dropped
                    mid-response), RATE 0..1;
                    e.g. 500=0.1,reset=0.02 (default none)
  --token-ttl S     access-token lifetime in seconds (default ${DEFAULT_OPTIONS.tokenTtlSeconds})
  --total-cap N     cap of includeTotal counts (default ${DEFAULT_OPTIONS.totalCap})
  --via-budget N    rows a via read may have left in its window (bounded or not)
                    before the gateway answers 504 (default ${DEFAULT_OPTIONS.viaBudget})
  --churn RATE      rows per second written while clients page (default ${DEFAULT_OPTIONS.churnRate})
  --gateway-timeout MS
                    how long a read over the via budget waits before its 504, as a
                    real gateway does; 0 answers at once (default ${DEFAULT_OPTIONS.gatewayTimeoutMs})
  --replica-lag MS  export pages come from a replica (meta.readFrom "secondary") that
                    shows pushed accounts and flags MS later (default ${DEFAULT_OPTIONS.replicaLagMs})
  --strict          refuse what the real service may refuse: a body not sent as
                    Content-Type: application/json, an unknown or malformed export
                    query parameter (limit=abc, sort=foo, includeTotal=yes, an unencoded
                    '+' in a timestamp), an edited cursor, and accounts without birthDate,
                    dateDue, phones or loanType
  --available LIST  catalog availability at start, e.g. D04,D06 or D04,D12=false;
                    POST /__sandbox/availability changes it while clients run
  --env             print shell lines on stdout instead of the JSON line:
                    export LENDER_AUTH_URL=… for the demo lender (password included),
                    also kept in a file only you can read while the sandbox runs. If a
                    sandbox started with --env is already running, print its lines
                    and exit, so in another shell: eval "$(lender sandbox --env)"
                    (with none running, that starts one the shell waits for: said on
                    stderr; stopped, it prints an unset line for the eval)
  --max-connections N
                    connections served at once; a request on one more is answered 503
                    with Retry-After (default ${DEFAULT_OPTIONS.maxConnections})
  --max-buffered-bytes N
                    request-body bytes held by all requests at once; a body that does not
                    fit is answered 503 with Retry-After
                    (default ${DEFAULT_OPTIONS.maxBufferedBytes}, ${DEFAULT_OPTIONS.maxBufferedBytes / 1024 / 1024} MiB)
  -h, --help        this text

Admin endpoints (no token): GET /__sandbox/stats, POST /__sandbox/drain,
POST /__sandbox/faults {"latencyMs","faults","tokenTtlSeconds"}, POST /__sandbox/advance,
POST /__sandbox/churn {"rate"}, POST /__sandbox/availability {"D04":true}.
`;

/** `D04,D06` or `D04=true,D12=false`: availability overrides. */
export function parseAvailableFlag(text: string): Partial<Record<DatasetCode, boolean>> {
  const available: Partial<Record<DatasetCode, boolean>> = {};
  for (const part of text.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const match = /^([^=]+?)(?:=(true|false))?$/.exec(part);
    const code = match?.[1]?.toUpperCase() ?? '';
    if (match === null || !isDatasetCode(code)) {
      throw new UsageError(`--available: '${part}' is not a dataset code such as D04, optionally =true or =false`);
    }
    available[code] = match[2] !== 'false';
  }
  return available;
}

/** Turns argv into SandboxOptions, refusing anything the sandbox would refuse. */
export function parseSandboxArgs(argv: string[]): SandboxOptions {
  const { values } = parseCommandArgs(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    seed: { type: 'string' },
    scale: { type: 'string' },
    latency: { type: 'string' },
    faults: { type: 'string' },
    'token-ttl': { type: 'string' },
    'total-cap': { type: 'string' },
    'via-budget': { type: 'string' },
    churn: { type: 'string' },
    'max-connections': { type: 'string' },
    'max-buffered-bytes': { type: 'string' },
    'gateway-timeout': { type: 'string' },
    'replica-lag': { type: 'string' },
    strict: { type: 'boolean' },
    available: { type: 'string' },
  });
  // Range checks beyond "a whole number" are resolveOptions' (below), so the CLI and
  // startSandbox() refuse the same values with the same words, the CLI naming its flag.
  const whole = (flag: string, text: string | undefined) => integerFlag(text, `--${flag}`, { min: 0 });
  const options: SandboxOptions = {};
  const set = <K extends keyof SandboxOptions>(key: K, value: SandboxOptions[K] | undefined) => {
    if (value !== undefined) options[key] = value;
  };
  set('port', whole('port', values.port));
  set('host', values.host);
  set('seed', whole('seed', values.seed));
  set('scale', whole('scale', values.scale));
  set('latencyMs', whole('latency', values.latency));
  set('tokenTtlSeconds', whole('token-ttl', values['token-ttl']));
  set('totalCap', whole('total-cap', values['total-cap']));
  set('viaBudget', whole('via-budget', values['via-budget']));
  set('churnRate', numberFlag(values.churn, '--churn'));
  set('maxConnections', whole('max-connections', values['max-connections']));
  set('maxBufferedBytes', whole('max-buffered-bytes', values['max-buffered-bytes']));
  set('gatewayTimeoutMs', whole('gateway-timeout', values['gateway-timeout']));
  set('replicaLagMs', whole('replica-lag', values['replica-lag']));
  if (values.strict === true) options.strict = true;
  if (values.available !== undefined) options.available = parseAvailableFlag(values.available);
  if (values.faults !== undefined) {
    try {
      options.faults = parseFaultSpec(values.faults);
    } catch (error) {
      if (error instanceof FaultSpecError) throw new UsageError(`--faults: ${error.message}`);
      throw error;
    }
  }
  try {
    resolveOptions(options);
  } catch (error) {
    if (!(error instanceof SandboxOptionsError)) throw error;
    const flag = error.option === undefined ? undefined : ownField(FLAG_OF_OPTION, error.option);
    throw new UsageError(flag === undefined ? error.message : `${flag}${error.message.slice(error.option!.length)}`);
  }
  return options;
}

/** The flag of each option the flags above set, as a refusal of its value names it. */
const FLAG_OF_OPTION: Partial<Record<keyof SandboxOptions, string>> = {
  port: '--port', host: '--host', seed: '--seed', scale: '--scale', latencyMs: '--latency', tokenTtlSeconds: '--token-ttl',
  totalCap: '--total-cap', viaBudget: '--via-budget', churnRate: '--churn', maxConnections: '--max-connections',
  maxBufferedBytes: '--max-buffered-bytes', gatewayTimeoutMs: '--gateway-timeout', replicaLagMs: '--replica-lag',
};

/** The arguments of `lender sandbox`: the sandbox's options, and whether to speak shell (--env). */
export function parseSandboxCommand(argv: string[]): { options: SandboxOptions; env: boolean } {
  const env = argv.includes('--env');
  return { options: parseSandboxArgs(argv.filter((a) => a !== '--env')), env };
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** Whether stdout is a pipe (a FIFO), as in the shell's `$(…)`; a file, a terminal or a socket is not. */
function writesToPipe(stdout: NodeJS.WritableStream): boolean {
  const fd = (stdout as { fd?: unknown }).fd;
  if (typeof fd !== 'number') return false;
  try {
    return fstatSync(fd).isFIFO();
  } catch {
    return false;
  }
}

async function run(argv: string[], io: CommandIo): Promise<number> {
  const { options, env } = parseSandboxCommand(argv);
  const envFile = env ? envFilePath(io.env) : undefined;
  if (envFile !== undefined) {
    const running = await readRunningEnv(envFile);
    if (running !== undefined) {
      io.stdout.write(running.lines);
      io.stderr.write(`lender sandbox: printed the variables of the sandbox already running (pid ${running.pid}) at ${running.authUrl}\n`);
      if (argv.length > 1) io.stderr.write('lender sandbox: the other flags were not applied; stop that sandbox to start another with them\n');
      return EXIT.ok;
    }
  }
  // In `$(…)` the shell reads until the sandbox ends: with none running, eval "$(lender sandbox
  // --env)" would start one and wait on it, silently. Said on stderr, which the user sees; a pipe
  // to tee or a supervisor is served as usual. Stopped, the sandbox unsets its variables on stdout,
  // so an eval of what it printed leaves none pointing at a server that is gone.
  const envIntoPipe = envFile !== undefined && writesToPipe(io.stdout);
  if (envIntoPipe) {
    io.stderr.write('lender sandbox: no sandbox started with --env was running, so this one starts and serves until stopped. ' +
      'If this is eval "$(lender sandbox --env)", the shell waits for it: press Ctrl-C, start the sandbox in another shell ' +
      '(lender sandbox --env), then run the eval again\n');
  }
  // Loaded here so `lender sandbox --help` and usage errors stay instant.
  const { startSandbox } = await import('../../sandbox/index.ts');
  const sandbox = await startSandbox(options).catch((error: NodeJS.ErrnoException) => {
    const where = `${options.host ?? DEFAULT_OPTIONS.host}:${options.port ?? DEFAULT_OPTIONS.port}`;
    if (error?.code === 'EADDRINUSE') throw new CommandFailure(`${where} is in use (another sandbox?): choose another --port, or --port 0 for a free one`);
    if (error?.code === 'EACCES') throw new CommandFailure(`not allowed to listen on ${where}: ports below 1024 need privileges; choose another --port`);
    if (error?.code === 'EADDRNOTAVAIL') throw new CommandFailure(`cannot listen on ${where}: no such address on this machine (--host)`);
    throw error;
  });
  try {
    if (envFile !== undefined) {
      const lines = exportLines(sandbox.authUrl, sandbox.credentials('demo'), sandbox.caFile);
      await writeEnvFile(envFile, sandbox.authUrl, lines);
      io.stdout.write(lines);
    } else {
      const line = {
        authUrl: sandbox.authUrl,
        baseUrl: sandbox.baseUrl,
        caFile: sandbox.caFile,
        lenders: sandbox.lenders.map(({ lender, email, password, lenderPublicId }) => ({ lender, email, password, lenderPublicId })),
      };
      io.stdout.write(JSON.stringify(line) + '\n');
    }
    const faults = formatFaultSpec(options.faults ?? {});
    io.stderr.write(
      `lender sandbox: serving ${sandbox.authUrl} (seed ${options.seed ?? DEFAULT_OPTIONS.seed}, ` +
        `scale ${options.scale ?? DEFAULT_OPTIONS.scale}${faults === '' ? '' : `, faults ${faults}`}); CA certificate at ${sandbox.caFile}\n` +
        `lender sandbox: log in with: curl --cacert ${sandbox.caFile} -H 'content-type: application/json' ` +
        `-d '{"email":"<email>","password":"<password>"}' ${sandbox.authUrl}/admin/auth/demo/login\n` +
        (envFile === undefined
          ? 'lender sandbox: the first stdout line has the credentials (started with --env instead, it lets ' +
            '`eval "$(lender sandbox --env)"` in another shell set them); press Ctrl-C to stop\n'
          : `lender sandbox: in another shell: eval "$(lender sandbox --env)" (the lines are also in ${envFile}); press Ctrl-C to stop\n`),
    );
    await untilAborted(io.signal);
  } finally {
    try {
      if (envFile !== undefined) await removeEnvFile(envFile);
    } finally {
      await sandbox.close();
    }
    if (envIntoPipe) {
      // A reader gone already (EPIPE) is fine: nobody is left to eval it.
      io.stdout.on('error', () => undefined);
      io.stdout.write(unsetLine());
    }
  }
  io.stderr.write('lender sandbox: stopped\n');
  return EXIT.ok;
}

const command: Command = {
  name: 'sandbox',
  summary: 'serve the sandbox service over HTTPS',
  help,
  run,
};
export default command;
