// The portal's Surveys page over real HTTP on the embedded database: a signed-in user sees
// the surveys and the variables, values and codes of the account's groups, and nothing else.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Dataset } from '../../src/index.js';
import { send } from './portal-client.js';
import { startPortalServer, type PortalServer } from './portal-server.js';

const paths = inject('testDatasets');

describe('portal Surveys page (embedded database)', () => {
  let portal: PortalServer | undefined;
  let gss: Dataset;
  let origin: string;
  let cookie: string;

  beforeAll(async () => {
    portal = await startPortalServer({ datasets: [paths.gss, paths.nhanes], prefix: 'crosstab-portal-surveys-', licences: [['GSS'], ['GSS:demographics']], mustChangePassword: false });
    ({ dataset: gss, origin } = portal);
    cookie = await portal.signInCookie('analyst@acme.example');
  });
  afterAll(() => portal?.close());

  it('lists the licensed surveys only, and a survey\'s variables, values and codes of the account\'s groups', async () => {
    const list = await send(origin, 'GET', '/portal/surveys', { cookie });
    expect(list.status).toBe(200);
    expect(list.body).toContain('/portal/surveys?survey=GSS');
    expect(list.body).not.toContain('NHANES');
    const page = await send(origin, 'GET', '/portal/surveys?survey=GSS', { cookie });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<code>sex=2</code> Female');
    expect(page.body).toContain('<code>degree=3..4</code>');
    // The page's text and every attribute value but the markup's own (id="main", class names).
    const text = page.body.replace(/<[^>]*>/g, ' ');
    const links = [...page.body.matchAll(/href="([^"]*)"/g)].map((match) => match[1]).join(' ');
    for (const variable of gss.info.variables) {
      if (variable.group === 'demographics') expect(page.body).toContain(`<code>${variable.name}</code>`);
      else expect(`${text} ${links}`, variable.name).not.toMatch(new RegExp(`(?<![A-Za-z0-9_])${variable.name}(?![A-Za-z0-9_])`));
    }
    expect(page.body).not.toMatch(/attitudes|LIBERAL|CONSERVATIVE|NONES/);
  });

  it('answers 404 for a survey the account does not license, and sends a signed-out visitor to sign in', async () => {
    const other = await send(origin, 'GET', '/portal/surveys?survey=NHANES', { cookie });
    expect(other.status).toBe(404);
    expect(other.body).toContain('Your account has no survey NHANES.');
    expect(other.body).not.toContain('RIAGENDR');
    expect((await send(origin, 'GET', '/portal/surveys?survey=GSS')).status).toBe(401);
  });
});
