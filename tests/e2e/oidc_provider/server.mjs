// A real OpenID Connect provider for cronwheel's e2e and browser tests: the npm oidc-provider package
// (8.8.1) on loopback, with its own development login page (any password), no consent screen for the
// configured clients, and a one-shot ID token tampering hook. See README.md beside this file.
//
// Usage: node server.mjs CONFIG.json
//   CONFIG.json: {"clients": [{"client_id", "client_secret", "redirect_uris": [...],
//                              "post_logout_redirect_uris": [...] (optional), other client metadata}],
//                 "accounts": {"<id>": {"email", "name", "groups": [...], "preferred_username" (default:
//                              the id), "email_verified" (default: true)}},
//                 "max_seconds": 900,
//                 "parent_pid": 1234 (optional)}
// It listens on 127.0.0.1 on a free port and prints one line to stdout, {"issuer":"http://127.0.0.1:PORT"};
// everything else (including oidc-provider's notices) goes to stderr. It exits by itself after max_seconds,
// when the process `parent_pid` is gone (checked every second; the e2e tests start it with stdin on
// /dev/null) or, without parent_pid, when its standard input reaches end of file (give it a pipe: a test that
// dies takes it down), and on SIGTERM/SIGINT.
//
// POST /__test/tamper {"kind": K} (K: signature, audience, nonce, expiry, issuer, alg_none) makes the next
// token endpoint response carry an altered id_token, once; it answers 204. Any other /__test path: 404.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import * as jose from 'jose';
import Provider from 'oidc-provider';

// Only the issuer line may go to stdout: oidc-provider prints its NOTICEs with console.info.
console.info = console.error;
console.log = console.error;

const configPath = process.argv[2];
if (!configPath) {
  console.error('usage: node server.mjs CONFIG.json');
  process.exit(2);
}
const config = JSON.parse(readFileSync(configPath, 'utf8'));
const accounts = config.accounts ?? {};
const maxSeconds = Number(config.max_seconds ?? 900);
if (!Array.isArray(config.clients) || config.clients.length === 0) {
  console.error('server.mjs: config.clients must list at least one client');
  process.exit(2);
}

const die = (code) => () => process.exit(code);
setTimeout(() => {
  console.error(`server.mjs: max_seconds (${maxSeconds}) reached, exiting`);
  process.exit(0);
}, maxSeconds * 1000);
if (config.parent_pid) {
  setInterval(() => {
    try {
      process.kill(Number(config.parent_pid), 0);
    } catch {
      console.error(`server.mjs: parent ${config.parent_pid} is gone, exiting`);
      process.exit(0);
    }
  }, 1000).unref();
} else {
  process.stdin.on('end', die(0));
  process.stdin.on('close', die(0));
  process.stdin.on('error', die(0));
  process.stdin.resume();
}
process.on('SIGTERM', die(0));
process.on('SIGINT', die(0));

// The RS256 signing key, new at every start.
const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
const privateJwk = await jose.exportJWK(privateKey);
const kid = await jose.calculateJwkThumbprint(privateJwk);
const signingJwk = { ...privateJwk, kid, alg: 'RS256', use: 'sig' };

const clientIds = new Set(config.clients.map((c) => c.client_id));
const clients = config.clients.map((c) => ({
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
  id_token_signed_response_alg: 'RS256',
  ...c,
}));

const html = (title, body) => `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>${title}</title></head>
<body>${body}</body></html>`;
const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

// Listen first, so the issuer can carry the port.
const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(0, '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients,
  jwks: { keys: [signingJwk] },
  cookies: {
    keys: [randomBytes(32).toString('hex')],
    // The default for the session cookie is SameSite=None, which browsers drop when not Secure (plain
    // http here); the provider and the relying party are same-site on 127.0.0.1 anyway.
    long: { httpOnly: true, sameSite: 'lax' },
    short: { httpOnly: true, sameSite: 'lax' },
  },
  claims: {
    openid: ['sub'],
    profile: ['name', 'preferred_username'],
    email: ['email', 'email_verified'],
    groups: ['groups'],
  },
  // The relying party reads the ID token only: put the requested scopes' claims in it.
  conformIdTokenClaims: false,
  async findAccount(ctx, id) {
    if (!Object.hasOwn(accounts, id)) return undefined;
    const a = accounts[id];
    return {
      accountId: id,
      async claims() {
        return {
          sub: id,
          preferred_username: a.preferred_username ?? id,
          name: a.name,
          email: a.email,
          email_verified: a.email_verified ?? true,
          groups: a.groups ?? [],
        };
      },
    };
  },
  // No consent screen for the configured clients: a grant covering whatever is requested.
  async loadExistingGrant(ctx) {
    const { oidc } = ctx;
    const grantId = oidc.result?.consent?.grantId || oidc.session.grantIdFor(oidc.client.clientId);
    let grant = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
    if (!clientIds.has(oidc.client.clientId) || !oidc.account) return grant;
    if (!grant || grant.accountId !== oidc.account.accountId) {
      grant = new oidc.provider.Grant({ clientId: oidc.client.clientId, accountId: oidc.account.accountId });
    }
    grant.addOIDCScope([...oidc.requestParamOIDCScopes].join(' '));
    grant.addOIDCClaims([...oidc.requestParamClaims]);
    await grant.save();
    return grant;
  },
  responseTypes: ['code'],
  pkce: { methods: ['S256'], required: () => true },
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: {
      enabled: true,
      async logoutSource(ctx, form) {
        ctx.body = html('Logout Request', `<h1>Do you want to sign-out from ${escapeHtml(ctx.host)}?</h1>
${form}
<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
<button type="submit" form="op.logoutForm">No, stay signed in</button>`);
      },
      async postLogoutSuccessSource(ctx) {
        ctx.body = html('Sign-out Success', '<h1>Sign-out Success</h1>');
      },
    },
  },
  async renderError(ctx, out) {
    ctx.type = 'html';
    ctx.body = html('oops! something went wrong', `<h1>oops! something went wrong</h1>
${Object.entries(out).map(([k, v]) => `<pre><strong>${escapeHtml(k)}</strong>: ${escapeHtml(v)}</pre>`).join('\n')}`);
  },
  ttl: {
    AccessToken: 3600,
    AuthorizationCode: 600,
    IdToken: 3600,
    Interaction: 3600,
    Session: 86400,
    Grant: 86400,
  },
});
provider.on('server_error', (ctx, err) => console.error('server_error', err));

// Tampering: the kind asked for by POST /__test/tamper, applied to the next token response, once.
let pendingTamper = null;
const KINDS = new Set(['signature', 'audience', 'nonce', 'expiry', 'issuer', 'alg_none']);

async function tamper(kind, idToken) {
  const [h, p, s] = idToken.split('.');
  const header = jose.decodeProtectedHeader(idToken);
  const payload = jose.decodeJwt(idToken);
  const resign = (changes) => new jose.SignJWT({ ...payload, ...changes })
    .setProtectedHeader(header)
    .sign(privateKey);
  const now = Math.floor(Date.now() / 1000);
  switch (kind) {
    case 'signature': {
      // A character in the middle (the last one may hold only padding bits).
      const i = Math.floor(s.length / 2);
      return `${h}.${p}.${s.slice(0, i)}${s[i] === 'A' ? 'B' : 'A'}${s.slice(i + 1)}`;
    }
    case 'audience': return resign({ aud: 'someone-else' });
    case 'nonce': return resign({ nonce: 'not-the-nonce' });
    case 'expiry': return resign({ exp: now - 600, iat: now - 1200 });
    case 'issuer': return resign({ iss: 'http://evil.example' });
    case 'alg_none': return `${jose.base64url.encode(JSON.stringify({ alg: 'none' }))}.${p}.`;
    default: throw new Error(`unknown tamper kind ${kind}`);
  }
}

async function readBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 57344) throw new Error('body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

provider.use(async (ctx, next) => {
  if (ctx.path === '/__test' || ctx.path.startsWith('/__test/')) {
    if (ctx.path === '/__test/tamper' && ctx.method === 'POST') {
      let body;
      try {
        body = JSON.parse((await readBody(ctx.req)) || '{}');
      } catch (err) {
        ctx.status = 400;
        ctx.body = { error: `bad JSON body: ${err.message}` };
        return;
      }
      if (!KINDS.has(body?.kind)) {
        ctx.status = 400;
        ctx.body = { error: `kind must be one of ${[...KINDS].join(', ')}` };
        return;
      }
      pendingTamper = body.kind;
      console.error(`server.mjs: the next id_token will be tampered: ${body.kind}`);
      ctx.status = 204;
      return;
    }
    ctx.status = 404;
    ctx.body = { error: 'not found' };
    return;
  }

  // devInteractions take any login, and a login that findAccount does not know would end in a server_error
  // (and, once in the session, make the next login a session switch that needs JavaScript): send such a
  // login back to its login page (303 to GET /interaction/<uid>). The body read here is handed on as
  // ctx.request.body, which oidc-provider's body parser takes when the stream is consumed.
  if (ctx.method === 'POST' && /^\/interaction\/[^/]+$/.test(ctx.path)
      && ctx.is('application/x-www-form-urlencoded')) {
    const raw = await readBody(ctx.req);
    ctx.request.body = raw;
    const form = new URLSearchParams(raw);
    if (form.get('prompt') === 'login' && !Object.hasOwn(accounts, form.get('login') ?? '')) {
      console.error(`server.mjs: unknown login ${JSON.stringify(form.get('login'))}, back to the login page`);
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 303;
      ctx.redirect(ctx.path);
      return;
    }
  }

  await next();

  if (ctx.oidc?.route === 'token' && pendingTamper && ctx.status === 200
      && ctx.body && typeof ctx.body.id_token === 'string') {
    const kind = pendingTamper;
    pendingTamper = null;
    ctx.body = { ...ctx.body, id_token: await tamper(kind, ctx.body.id_token) };
  }
  // The development login and consent pages @import a web font from the internet: these tests reach
  // nothing but loopback.
  if (typeof ctx.body === 'string' && ctx.response.is('html')) {
    ctx.body = ctx.body.replace(/@import url\(https?:\/\/[^)]*\);?/g, '');
  }
});

server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
console.error(`server.mjs: listening, issuer ${issuer}, key id ${kid}, exits after ${maxSeconds} s`);
