// The built package, imported by its name as users do: `crosstab-engine/http` exports the
// documented API and loads without any web framework installed (they are optional peers).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/paths.js';

const EXPORTS = [
  'ALL',
  'API_KEY_PATTERN',
  'API_VERSION',
  'AUTH_HEADER',
  'CORS_MAX_AGE_SECONDS',
  'DEFAULT_CLOSE_TIMEOUT_MS',
  'DEFAULT_TABLE_LIMITS',
  'FairShare',
  'FileKeyStore',
  'KEY_FILE_FORMAT',
  'MAX_EXPRESSION_LENGTH',
  'MAX_TABLE_CELLS',
  'MAX_TARGET_CODES',
  'MIN_TARGET_CODES',
  'NdjsonLedger',
  'ServiceMetrics',
  'addApiKey',
  'buildOpenApiDocument',
  'checkServerUrl',
  'clientAddress',
  'createCrosstabHandler',
  'createNodeListener',
  'crosstabExpress',
  'crosstabFastify',
  'crosstabHono',
  'datasetVersion',
  'errorSchemaNames',
  'forwardedProto',
  'generateApiKey',
  'hashApiKey',
  'headerOf',
  'isServiceError',
  'keyStatus',
  'listen',
  'listenMetrics',
  'normalizeAddress',
  'proxyTrust',
  'readKeyFile',
  'readNodeBody',
  'readWebBody',
  'requestBody',
  'revokeApiKey',
  'rotateApiKey',
  'sendNodeResponse',
  'serviceErrorStatus',
  'withBody',
  'writeKeyFile',
];

// Refuses to resolve any framework: the adapter must not import one at run time.
const NO_FRAMEWORKS = `export async function resolve(specifier, context, next) {
  if (/^(fastify|express|hono|@hono\\/node-server)(\\/|$)/.test(specifier)) throw new Error('runtime import of ' + specifier);
  return next(specifier, context);
}`;

const SCRIPT = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(NO_FRAMEWORKS)}));
const http = await import('crosstab-engine/http');
process.stdout.write(JSON.stringify(Object.keys(http).sort()));
`;

describe('crosstab-engine/http (built package)', () => {
  it('exports the documented API and imports no framework at run time', () => {
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT], { cwd: repoRoot, encoding: 'utf8' });
    expect(result.stderr, 'run `npm run build` first; tsup needs the entry http/index: src/http/index.ts').toBe('');
    expect(JSON.parse(result.stdout)).toEqual(EXPORTS);
  });
});
