// The `lender repl`: Node's REPL with a session preloaded. The prompt comes up at once and the
// session connects behind it (with the embedded sandbox, about half a second); lines typed
// meanwhile wait for it and then run in order, one after the other (line-gate.ts).
import { Console } from 'node:console';
import { createInterface, clearLine, cursorTo } from 'node:readline';
import { PassThrough, Writable } from 'node:stream';
import repl, { type REPLServer } from 'node:repl';
import { inspect } from 'node:util';
import type { LenderSession } from '../src/session/context.ts';
import { redactText } from '../src/core/redact.ts';
import { looksSensitive } from '../src/session/secrets.ts';
import { TextTable, type TableOptions } from '../src/session/table.ts';
import { chartModel, textChart, type ChartData, type ChartOptions } from '../src/session/chart.ts';
import { fileState, memoryState } from '../src/exports/state.ts';
import { installCompleter } from './completer.ts';
import { defineCommands, type ReplState } from './commands.ts';
import { isInterrupt, oneLine, stackOf } from './errors.ts';
import { attachHistory, HISTORY_ENV, historyPath, type PersistentHistory } from './history.ts';
import { DATASET_CODES } from '../src/core/catalog.ts';
import { promptAgain } from './prompt.ts';
import { LineGate } from './line-gate.ts';

export interface ReplOptions {
  /** The session, possibly still connecting. */
  session: Promise<LenderSession>;
  /** Said while connecting, e.g. "an embedded sandbox". */
  connectingTo: string;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Default: whether output is a TTY. */
  terminal?: boolean;
  env: NodeJS.ProcessEnv;
  /** Default historyPath(env); undefined from there means no history file. */
  historyFile?: string | undefined;
  version: string;
}

/** Helpers that go through the session; each waits for it to be connected. */
const ASYNC_HELPERS = ['rows', 'pages', 'count', 'describe', 'sql', 'push', 'flag', 'sync', 'relogin', 'refreshCatalog'] as const;

type Eval = (code: string, context: object, file: string, cb: (err: Error | null, result?: unknown) => void) => void;

export function runRepl(opts: ReplOptions): Promise<number> {
  const terminal = opts.terminal ?? Boolean((opts.output as { isTTY?: boolean }).isTTY);
  const debug = Boolean(opts.env.LENDER_DEBUG);
  const state: ReplState = { session: undefined, lastError: undefined, connectError: undefined, ready: opts.session };

  // Everything the REPL prints (results, errors, news) may quote a server or hold a value the user
  // fetched: the session's password and tokens, and anything credential-shaped, are cut out.
  const scrub = (text: string): string => {
    const session = state.session;
    return session === undefined ? redactText(text) : redactText(session.client.redact(text), session.knownSecrets());
  };
  const out = (text: string) => opts.output.write(scrub(text.endsWith('\n') ? text : `${text}\n`));
  // Console writes one whole formatted text at a time, so a secret is never split between two.
  const scrubbing = (to: NodeJS.WritableStream): Writable => new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      to.write(scrub(String(chunk)));
      done();
    },
  });
  // For news that arrives while the prompt shows (the session connected): in a terminal it takes
  // the prompt's line, and the caller draws the prompt again below it with what was typed so far.
  const announce = (text: string): void => {
    if (terminal) {
      cursorTo(opts.output, 0);
      clearLine(opts.output, 0);
      out(text);
    } else {
      // The prompt shown at start ends without a newline: the news goes on a line of its own.
      out(`\n${text}`);
    }
  };
  out(`lender-streams ${opts.version}: connecting to ${opts.connectingTo}…`);
  out(`Helpers: rows, pages, count, describe, sql, push, flag, sync (await them), stream, table, chart, whoami. .help lists the commands.`);

  // Without a terminal the lines come from our own reader, through the gate; the REPL reads a
  // stream of its own that ends only once every line has run, so the end of piped input never
  // closes the session under a running call.
  const replInput = terminal ? opts.input : new PassThrough();
  const server = repl.start({
    prompt: 'lender> ',
    input: replInput,
    output: opts.output,
    terminal,
    useColors: terminal,
    ignoreUndefined: true,
    // Node's inline preview formats values itself, past the writer's scrub: it would show a
    // password in grey as its name is typed.
    preview: false,
    // Lets Ctrl-C reach us while a top-level await is pending (Node buffers keys otherwise). Only
    // on a terminal: once vm has run an evaluation with it, a SIGINT gets its default action and
    // ends the process, and without a terminal Ctrl-C is that signal (handled below).
    breakEvalOnSigint: terminal,
    writer: (value: unknown) => scrub(inspect(value, { colors: terminal, depth: 4, breakLength: 100 })),
  });

  // ---- Ctrl-C: abort what the running evaluation started, stay in the REPL.
  const running = new Set<AbortController>();
  let current: AbortController | undefined;
  const abortRunning = (reason: string): void => {
    for (const c of running) c.abort(new Error(reason));
    running.clear();
  };
  // Lines typed ahead (while connecting, or behind a running call) are cancelled with it.
  const cancelQueued = (): boolean => {
    const dropped = gate.cancelQueued();
    if (dropped > 0) out(`Cancelled ${dropped === 1 ? 'the line' : `${dropped} lines`} typed ahead.`);
    return dropped > 0;
  };
  const onCtrlC = (): void => {
    cancelQueued();
    abortRunning('interrupted by Ctrl-C');
  };
  // Prepended: Node's own listener settles the evaluation first, and we must see it running.
  server.prependListener('SIGINT', onCtrlC);
  // The CLI's own SIGINT handler would end the process on the second signal, which is not what
  // Ctrl-C means in a REPL: it is set aside while the REPL runs. Without a terminal, Ctrl-C
  // arrives as that signal and is handled here. On a terminal no process listener may stay: with
  // one, Node cannot break a synchronous evaluation (`while (true) {}`) and the signal ends the
  // process; Ctrl-C reaches the REPL as a key, or breaks the evaluation.
  const previousSigint = process.listeners('SIGINT');
  const onProcessSigint = (): void => {
    const cancelled = cancelQueued();
    if (running.size > 0) onCtrlC();
    else if (!cancelled) out('(To exit, type .exit or press Ctrl-D)');
  };
  for (const l of previousSigint) process.off('SIGINT', l);
  if (!terminal) process.on('SIGINT', onProcessSigint);

  // ---- Evaluation: one-line errors, interrupt signal per evaluation.
  const finished = new Map<AbortController, () => void>();
  const settle = (controller: AbortController): void => {
    running.delete(controller);
    if (current === controller) current = undefined;
    finished.get(controller)?.();
    finished.delete(controller);
  };
  const report = (err: unknown): void => {
    state.lastError = err;
    out(debug && !isInterrupt(err) ? stackOf(err) : `${oneLine(err)}${isInterrupt(err) ? '' : '  (.stack for details)'}`);
  };
  // Node's default eval runs inside the REPL's domain and hands errors to it, whose listener
  // prints them with their stack as "Uncaught …". `_domain` is internal (Node 20 to 24 have it);
  // without it errors still print, Node's way.
  const replDomain = (server as unknown as { _domain?: NodeJS.EventEmitter })._domain;
  if (replDomain !== undefined && typeof replDomain.on === 'function') {
    replDomain.removeAllListeners('error');
    replDomain.on('error', (err: unknown) => {
      // The evaluation that failed is the current one: Node runs them one at a time.
      if (current !== undefined) settle(current);
      report(err);
      server.clearBufferedCommand();
      const lines = (server as unknown as { lines?: { level?: unknown[] } }).lines;
      if (lines !== undefined) lines.level = [];
      promptAgain(server);
    });
  }
  const baseEval = server.eval as unknown as Eval;
  const wrapped: Eval = (code, context, file, cb) => {
    const controller = new AbortController();
    running.add(controller);
    current = controller;
    // The next line waits until this evaluation has settled.
    gate.track(new Promise<void>((resolve) => finished.set(controller, resolve)));
    baseEval.call(server, code, context, file, (err, result) => {
      settle(controller);
      if (err === null || err === undefined || err instanceof repl.Recoverable) {
        cb(err ?? null, result);
        return;
      }
      report(err);
      cb(null, undefined);
    });
  };
  (server as unknown as { eval: Eval }).eval = wrapped;

  // ---- Context.
  const needSession = (what: string): LenderSession => {
    if (state.session !== undefined) return state.session;
    if (state.connectError !== undefined) throw new Error(`Not connected: ${oneLine(state.connectError)}`);
    throw new Error(`Still connecting; \`${what}\` is there in a moment (or: await ready).`);
  };
  const installContext = (context: object): void => {
    // Live parts (client, catalog…) are getters; helpers are plain values the user may reassign.
    const define = (name: string, get: () => unknown): void => {
      Object.defineProperty(context, name, { get, enumerable: true, configurable: true });
    };
    const value = (name: string, v: unknown): void => {
      Object.defineProperty(context, name, { value: v, writable: true, enumerable: true, configurable: true });
    };
    // Named after the helper, so `rows` prints as [AsyncFunction: rows] and stacks say `rows`.
    const helper = (name: string, fn: (...args: unknown[]) => unknown): void => {
      Object.defineProperty(fn, 'name', { value: name });
      value(name, fn);
    };
    type Method = (...a: unknown[]) => unknown;
    for (const name of ASYNC_HELPERS) {
      helper(name, async (...args: unknown[]) => ((await state.ready)[name] as Method)(...args));
    }
    helper('stream', (...args: unknown[]) => (needSession('stream').stream as Method)(...args));
    helper('whoami', () => needSession('whoami').whoami());
    helper('table', (rows, fields, options) =>
      new TextTable([...(rows as Iterable<object>)], fields as readonly string[] | undefined, options as TableOptions | undefined));
    helper('chart', (data, options) =>
      textChart(chartModel(data as ChartData, typeof options === 'number' ? { textWidth: options } : options as ChartOptions | undefined)));
    // console.log and the like would write to the process's own streams, past the scrub: the
    // context has a console whose text is scrubbed as everything else the REPL prints.
    value('console', new Console({ stdout: scrubbing(opts.output), stderr: scrubbing(process.stderr), colorMode: terminal }));
    value('fileState', fileState);
    value('memoryState', memoryState);
    value('ready', state.ready);
    define('session', () => needSession('session'));
    define('client', () => needSession('client').client);
    define('catalog', () => needSession('catalog').catalog);
    define('sandbox', () => needSession('sandbox').sandbox);
  };
  installContext(server.context);
  // `.clear` gives the REPL a fresh context: put the helpers back into it.
  server.on('reset', installContext);

  const codes = (): readonly string[] => state.session?.datasetCodes ?? DATASET_CODES;
  installCompleter(server, codes);
  const isSecret = (line: string): boolean => looksSensitive(line, state.session?.knownSecrets() ?? []);
  defineCommands(server, state, { out, debug, isSecret, track: (work) => gate.track(work) });

  // ---- History.
  let history: PersistentHistory | undefined;
  const file = 'historyFile' in opts ? opts.historyFile : historyPath(opts.env);
  if (file !== undefined) {
    try {
      history = attachHistory(server, {
        path: file,
        isSecret,
        // Only the default folder is ours to tighten; one the user named is left as it is.
        privateFolder: !('historyFile' in opts) && opts.env[HISTORY_ENV] === undefined,
      });
    } catch (error) {
      out(`History is off: ${oneLine(error)}`);
    }
  }

  // ---- Lines: one at a time, in order, from when the session is connected. Set up after the
  // history, so a line reaches the history file once it runs, when the session's secrets are known.
  const gate = new LineGate(server);
  if (!terminal) {
    const lines = createInterface({ input: opts.input, crlfDelay: Infinity, terminal: false });
    lines.on('line', (line) => gate.push(line));
    lines.once('close', () => gate.end(() => (replInput as PassThrough).end()));
    // After .exit (or a failed connection) stdin is no longer read, so it keeps no process alive.
    server.once('exit', () => lines.close());
  }

  // ---- Connection.
  opts.session.then(
    (session) => {
      state.session = session;
      // Its secrets are known now: lines of the history that hold them go, in the file and in memory.
      history?.forgetSecrets();
      session.setInterruptSource(() => current?.signal);
      const id = session.whoami();
      announce(`Connected as ${id.lender} (${id.email}) ${id.sandbox ? 'to the embedded sandbox' : `to ${id.authUrl}`}; ` +
        `${session.catalog.available().length} datasets available. Try: await rows('D07', {limit: 3})`);
      promptAgain(server, true);
      gate.open();
    },
    (error: unknown) => {
      state.connectError = error;
      announce(`Could not connect: ${oneLine(error)}`);
      if (debug) out(stackOf(error));
      server.close();
    },
  );

  return new Promise<number>((resolve) => {
    server.on('exit', () => {
      // Only what outlives the REPL: lines never run into a close, they wait for each other.
      abortRunning('the REPL closed');
      history?.close();
      if (!terminal) {
        // The last prompt, shown before the input ended, gets its line's end (after a failed
        // connection no prompt came again).
        if (state.connectError === undefined) opts.output.write('\n');
        process.off('SIGINT', onProcessSigint);
      }
      for (const l of previousSigint) process.on('SIGINT', l);
      const code = state.connectError !== undefined ? 1 : 0;
      opts.session.then((s) => s.close(), () => undefined).then(() => resolve(code), () => resolve(code));
    });
  });
}

export type { REPLServer };
