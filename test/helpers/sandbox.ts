// Starts an in-process sandbox for a test file and talks JSON to it over real HTTPS, trusting
// only the sandbox's own CA. Usage:
//
//   const t = await startTestSandbox({ scale: 50 });
//   after(() => t.close());
//   const session = await t.loginAs('demo');
//   const res = await t.request('GET', `/admin/v3/lenders/${session.lenderPublicId}/exports/catalog`,
//     { token: session.token });
//   assert.equal(res.status, 200);
import { join } from 'node:path';
import { Agent, request as undiciRequest } from 'undici';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.ts';

export interface JsonResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or undefined when the body was not JSON (see `text`). */
  readonly body: any;
  readonly text: string;
}

export interface RequestOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Serialised as JSON. */
  body?: unknown;
  /** Sent verbatim instead of `body` (malformed JSON, huge payloads). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface Session {
  readonly token: string;
  readonly refreshToken: string;
  readonly lenderPublicId: string;
}

export interface TestSandbox {
  readonly sandbox: Sandbox;
  /** An undici dispatcher that trusts the sandbox CA, for tests making their own calls. */
  readonly agent: Agent;
  /** `path` is relative to authUrl, e.g. '/admin/auth/demo/login' or '/admin/v3/lenders/...'. */
  request(method: string, path: string, options?: RequestOptions): Promise<JsonResponse>;
  /** Logs in with the sandbox's credentials of `lender`; fails the test on anything but 200. */
  loginAs(lender?: string): Promise<Session>;
  /** What a `lender` command needs to log in as `lender` (default demo) over the sandbox's CA,
   * with a credentials file in `dir` that does not exist, so no stored login of the machine is read. */
  cliEnv(dir: string, lender?: string): NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export async function requestJson(
  agent: Agent, origin: string, method: string, path: string, options: RequestOptions = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let payload: string | Buffer | undefined = options.rawBody;
  if (payload === undefined && options.body !== undefined) payload = JSON.stringify(options.body);
  if (payload !== undefined) headers['content-type'] ??= 'application/json';
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const res = await undiciRequest(`${origin}${path}`, { method: method as 'GET', headers, body: payload, dispatcher: agent });
  const text = await res.body.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body, text };
}

/** What the project's tests run against unless a test says otherwise: the strict sandbox, so the
 * client is proven not to rely on leniency the real service may not have, and a gateway that
 * answers its 504 at once, so a test that meets one is not slowed by the gateway's timeout. */
export const TEST_SANDBOX_DEFAULTS = { strict: true, gatewayTimeoutMs: 0 } as const satisfies SandboxOptions;

/** The same for a `lender sandbox` child process. */
export const TEST_SANDBOX_FLAGS = ['--strict', '--gateway-timeout', '0'] as const;

export async function startTestSandbox(options: SandboxOptions = {}): Promise<TestSandbox> {
  // Small data by default keeps start-up fast; tests that need volume pass a scale.
  const sandbox = await startSandbox({ scale: 20, ...TEST_SANDBOX_DEFAULTS, ...options });
  const agent = new Agent({ connect: { ca: sandbox.ca } });
  const request = (method: string, path: string, opts?: RequestOptions) =>
    requestJson(agent, sandbox.authUrl, method, path, opts);
  return {
    sandbox,
    agent,
    request,
    async loginAs(lender = 'demo') {
      const { email, password } = sandbox.credentials(lender);
      const res = await request('POST', `/admin/auth/${lender}/login`, { body: { email, password } });
      if (res.status !== 200) throw new Error(`login as ${lender} answered ${res.status}: ${res.text}`);
      return res.body as Session;
    },
    cliEnv(dir, lender = 'demo') {
      const { email, password } = sandbox.credentials(lender);
      return {
        LENDER_AUTH_URL: sandbox.authUrl, LENDER_SUBDOMAIN: lender, LENDER_EMAIL: email, LENDER_PASSWORD: password,
        LENDER_CA_FILE: sandbox.caFile, LENDER_CREDENTIALS_FILE: join(dir, 'no-such-credentials.json'),
      };
    },
    async close() {
      await sandbox.close();
      await agent.close();
    },
  };
}
