// The authorization server tests/auth.rs starts: oidc-provider (OpenID certified),
// issuing real signed access tokens with the client-credentials grant.
//
//   PORT=4444 RESOURCE=http://127.0.0.1:8080/mcp node auth_server.mjs
//
// RESOURCE gets RFC 9068 JWT access tokens (aud = RESOURCE); OPAQUE_RESOURCE (if set)
// gets opaque tokens, for introspection; https://other.example/api gets JWTs with a
// foreign audience. AT_TTL: token lifetime in seconds (default 300). KEYS_FILE: where
// the signing keys live (made on first start); ROTATE=<kid> puts a new key first (it
// signs from then on; the old ones stay published). Clients: svc/svc-secret and
// svc2/svc2-secret (client credentials), mcp-rs/mcp-rs-secret (the resource server, for
// introspection). Prints "ready <issuer>" once listening.
import * as fs from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

const PORT = Number(process.env.PORT || 4444);
const ISSUER = `http://127.0.0.1:${PORT}`;
const RESOURCE = process.env.RESOURCE;
const OPAQUE_RESOURCE = process.env.OPAQUE_RESOURCE;
const SCOPES = process.env.SCOPES || 'mcp:read mcp:write';
const AT_TTL = Number(process.env.AT_TTL || 300);

function newKey(kid) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' };
}

let keys = [];
if (process.env.KEYS_FILE && fs.existsSync(process.env.KEYS_FILE)) {
  keys = JSON.parse(fs.readFileSync(process.env.KEYS_FILE, 'utf8')).keys;
}
if (keys.length === 0) keys = [newKey('k1')];
if (process.env.ROTATE) keys = [newKey(process.env.ROTATE), ...keys];
if (process.env.KEYS_FILE) fs.writeFileSync(process.env.KEYS_FILE, JSON.stringify({ keys }));

const machine = (id) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  token_endpoint_auth_method: 'client_secret_basic',
});

const jwt = (audience) => ({
  scope: SCOPES,
  audience,
  accessTokenTTL: AT_TTL,
  accessTokenFormat: 'jwt',
  jwt: { sign: { alg: 'RS256' } },
});

const provider = new Provider(ISSUER, {
  jwks: { keys },
  cookies: { keys: ['tests-only-cookie-secret'] },
  clients: [
    machine('svc'),
    machine('svc2'),
    { client_id: 'mcp-rs', client_secret: 'mcp-rs-secret', grant_types: [], response_types: [], redirect_uris: [] },
  ],
  scopes: ['openid', 'offline_access', ...SCOPES.split(' ')],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (ctx, client, oneOf) => oneOf ?? RESOURCE,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, indicator) => {
        if (indicator === RESOURCE) return jwt(RESOURCE);
        if (OPAQUE_RESOURCE && indicator === OPAQUE_RESOURCE) {
          return { scope: SCOPES, audience: OPAQUE_RESOURCE, accessTokenTTL: AT_TTL, accessTokenFormat: 'opaque' };
        }
        if (indicator === 'https://other.example/api') return jwt(indicator);
        throw new errors.InvalidTarget();
      },
    },
  },
});

provider.listen(PORT, '127.0.0.1', () => console.log(`ready ${ISSUER}`));
