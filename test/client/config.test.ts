import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { baseUrlOf, credentialsFilePath, normalizeAuthUrl, resolveConfig } from '../../src/client/config.ts';
import { ConfigError, InsecureUrlError } from '../../src/core/errors.ts';

const SECRET = 'pw-Th1s-Is-Secret';

describe('config resolution', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lender-config-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function credentialsFile(name: string, content: unknown, mode = 0o600): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
    await chmod(path, mode);
    return path;
  }

  it('derives baseUrl from authUrl and trims trailing slashes', () => {
    assert.equal(normalizeAuthUrl('https://api.example.com/'), 'https://api.example.com');
    assert.equal(baseUrlOf('https://api.example.com/root//'), 'https://api.example.com/root/admin/v3');
  });

  it('refuses http: with a sentence that says HTTPS is required and why', () => {
    assert.throws(() => normalizeAuthUrl('http://api.example.com'), (error: unknown) => {
      assert.ok(error instanceof InsecureUrlError);
      assert.match(error.message, /requires HTTPS/);
      assert.match(error.message, /clear text/);
      return true;
    });
  });

  it('refuses a URL carrying credentials without echoing them', () => {
    assert.throws(() => normalizeAuthUrl(`https://user:${SECRET}@api.example.com`), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.doesNotMatch(error.message, new RegExp(SECRET));
      return true;
    });
  });

  it('takes options first, then the environment, field by field', async () => {
    const env = {
      LENDER_AUTH_URL: 'https://env.example.com', LENDER_SUBDOMAIN: 'envlender',
      LENDER_EMAIL: 'env@example.com', LENDER_PASSWORD: SECRET, LENDER_CREDENTIALS_FILE: join(dir, 'absent.json'),
    };
    const config = await resolveConfig({ lender: 'optlender' }, env);
    assert.equal(config.authUrl, 'https://env.example.com');
    assert.equal(config.baseUrl, 'https://env.example.com/admin/v3');
    assert.equal(config.lender, 'optlender');
    assert.equal(config.email, 'env@example.com');
    assert.equal(config.revealPassword(), SECRET);
    assert.doesNotMatch(JSON.stringify(config), new RegExp(SECRET));
    assert.doesNotMatch(inspect(config, { showHidden: true, depth: 5 }), new RegExp(SECRET));
  });

  it('refuses an http: URL from the environment before reading any file', async () => {
    // The credentials file path points into a folder that does not exist: reading it would ENOENT
    // silently, so the proof is the error type, raised by the URL check that runs first.
    await assert.rejects(
      resolveConfig({}, { LENDER_AUTH_URL: 'http://plain.example.com', LENDER_CREDENTIALS_FILE: join(dir, 'nope', 'x.json') }),
      InsecureUrlError,
    );
  });

  it('falls back to the credentials file and resolves its caFile relative to it', async () => {
    await writeFile(join(dir, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    const path = await credentialsFile('good.json', {
      authUrl: 'https://file.example.com/', lender: 'filelender', email: 'f@example.com', password: SECRET, caFile: 'ca.pem',
    });
    const config = await resolveConfig({}, { LENDER_CREDENTIALS_FILE: path });
    assert.equal(config.authUrl, 'https://file.example.com');
    assert.equal(config.lender, 'filelender');
    assert.match(String(config.ca), /BEGIN CERTIFICATE/);
  });

  it('refuses a credentials file that other users can read, naming chmod 600', async () => {
    const path = await credentialsFile('open.json', { authUrl: 'https://x.example.com', lender: 'l', email: 'e', password: SECRET }, 0o644);
    await assert.rejects(resolveConfig({}, { LENDER_CREDENTIALS_FILE: path }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /chmod 600/);
      assert.match(error.message, /0644/);
      return true;
    });
  });

  it('never quotes a malformed credentials file (it holds a password)', async () => {
    const path = await credentialsFile('bad.json', `{"password": "${SECRET}", oops}`);
    await assert.rejects(resolveConfig({}, { LENDER_CREDENTIALS_FILE: path }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /not valid JSON/);
      assert.doesNotMatch(inspect(error, { depth: 5 }), new RegExp(SECRET));
      return true;
    });
  });

  it('names the environment variables and --sandbox when credentials are missing', async () => {
    await assert.rejects(resolveConfig({}, { LENDER_CREDENTIALS_FILE: join(dir, 'absent.json') }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      for (const name of ['LENDER_AUTH_URL', 'LENDER_SUBDOMAIN', 'LENDER_EMAIL', 'LENDER_PASSWORD', '--sandbox']) {
        assert.ok(error.message.includes(name), `message names ${name}: ${error.message}`);
      }
      return true;
    });
  });

  it('finds the credentials file under XDG_CONFIG_HOME, else ~/.config', () => {
    assert.equal(credentialsFilePath({ XDG_CONFIG_HOME: '/cfg' }), join('/cfg', 'lender-streams', 'credentials.json'));
    assert.match(credentialsFilePath({}), /\.config[\\/]lender-streams[\\/]credentials\.json$/);
    assert.equal(credentialsFilePath({ LENDER_CREDENTIALS_FILE: '/x/c.json', XDG_CONFIG_HOME: '/cfg' }), '/x/c.json');
  });

  it('reports an unreadable CA file as a ConfigError', async () => {
    await assert.rejects(
      resolveConfig({ authUrl: 'https://x.example.com', lender: 'l', email: 'e', password: 'p', caFile: join(dir, 'missing.pem') }, {}),
      /Could not read the CA file/,
    );
  });

  it('reports a CA file without a PEM certificate as a ConfigError, not as an untrusted server later', async () => {
    const junk = join(dir, 'junk.pem');
    await writeFile(junk, 'junk\n');
    await assert.rejects(
      resolveConfig({ authUrl: 'https://x.example.com', lender: 'l', email: 'e', password: 'p', caFile: junk }, {}),
      (error: unknown) => error instanceof ConfigError && error.message === `The CA file ${junk} holds no PEM certificate (-----BEGIN CERTIFICATE-----); check LENDER_CA_FILE or --ca-file.`,
    );
    // OpenSSL's trusted form is a certificate Node takes too.
    const trusted = join(dir, 'trusted.pem');
    await writeFile(trusted, '-----BEGIN TRUSTED CERTIFICATE-----\nMIIB\n-----END TRUSTED CERTIFICATE-----\n');
    const config = await resolveConfig({ authUrl: 'https://x.example.com', lender: 'l', email: 'e', password: 'p', caFile: trusted }, {});
    assert.match(String(config.ca), /TRUSTED CERTIFICATE/);
  });
});
