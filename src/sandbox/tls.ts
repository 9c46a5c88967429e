// The sandbox's certificate: generated at every start (no key material on disk or in git),
// self-signed and marked as a CA so clients can pass the same PEM as their trusted `ca`. The key
// is ECDSA P-256: about as strong as RSA-3072, and made in about a millisecond, where an RSA-2048
// key takes 100 to 300 ms of the start.
import { isIP } from 'node:net';

export interface TlsMaterial {
  /** PEM private key; stays in memory. */
  readonly key: string;
  /** PEM certificate; doubles as the CA clients trust. */
  readonly cert: string;
}

const VALID_DAYS = 30;

type AltName = { type: 2; value: string } | { type: 7; ip: string };

const LOOPBACK_NAMES: AltName[] = [
  { type: 2, value: 'localhost' },
  { type: 7, ip: '127.0.0.1' },
  { type: 7, ip: '::1' },
];

/** Subject names for a bind address, so a sandbox bound to a LAN address or host name still
 * verifies. Wildcard binds are reached over loopback, which the defaults cover. */
export function altNamesFor(host: string): AltName[] {
  const names = [...LOOPBACK_NAMES];
  if (host === '0.0.0.0' || host === '::' || host === '') return names;
  const already = names.some((n) => ('ip' in n ? n.ip : n.value) === host);
  if (!already) names.push(isIP(host) !== 0 ? { type: 7, ip: host } : { type: 2, value: host });
  return names;
}

type Generate = (typeof import('selfsigned'))['generate'];
let loading: Promise<Generate> | undefined;

/** The helpers tslib 2's CommonJS build puts on the global object. */
const TSLIB_GLOBALS = new Set([
  '__extends', '__assign', '__rest', '__decorate', '__param', '__esDecorate', '__runInitializers', '__propKey',
  '__setFunctionName', '__metadata', '__awaiter', '__generator', '__exportStar', '__createBinding', '__values', '__read',
  '__spread', '__spreadArrays', '__spreadArray', '__await', '__asyncGenerator', '__asyncDelegator', '__asyncValues',
  '__makeTemplateObject', '__importStar', '__importDefault', '__classPrivateFieldGet', '__classPrivateFieldSet',
  '__classPrivateFieldIn', '__addDisposableResource', '__disposeResources', '__rewriteRelativeImportExtension',
]);

/**
 * selfsigned's generate(), loaded at the first certificate. Its dependencies load tslib, whose
 * CommonJS build also puts its helpers on the global object, where nothing here reads them: those
 * it added are removed again, so that neither a program that starts a sandbox nor the REPL sees
 * them (on Node 24, `lender repl --sandbox` copied them into its context, and offered all 32 as
 * completions). Only tslib's names go, and only those that were not there before.
 */
function loadSelfsigned(): Promise<Generate> {
  loading ??= (async () => {
    const already = [...TSLIB_GLOBALS].filter((name) => Object.hasOwn(globalThis, name));
    const { generate } = await import('selfsigned');
    for (const name of TSLIB_GLOBALS) if (!already.includes(name)) delete (globalThis as Record<string, unknown>)[name];
    return generate;
  })().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

export async function generateTls(host = '127.0.0.1', commonName = 'lender-streams sandbox'): Promise<TlsMaterial> {
  const generate = await loadSelfsigned();
  // Backdated an hour so a client whose clock lags a little still accepts it.
  const notBeforeDate = new Date(Date.now() - 3600_000);
  const notAfterDate = new Date(notBeforeDate.getTime() + VALID_DAYS * 24 * 3600_000);
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      // No keyEncipherment: an EC key signs (the handshake, this certificate), it never encrypts.
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: altNamesFor(host),
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}
