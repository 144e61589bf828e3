// `@name` in the expression grammar: a bare term starting with "@" is a saved audience, never a
// variable or code (those are quoted, and printed quoted); expandAudiences splices each one in
// parentheses, refuses cycles, chains past MAX_AUDIENCE_DEPTH and expansions past the grammar's
// bounds without showing a definition, and the library refuses an unexpanded one.
import { describe, expect, it } from 'vitest';
import { expandAudiences, MAX_AUDIENCE_DEPTH, parseExpression, type AudienceDefinition } from '../src/index.js';
import { Resolver } from '../src/query/resolve.js';
import { nameText } from '../src/text/expression-text.js';

const lookupOf = (definitions: Record<string, string>) => (name: string): AudienceDefinition | undefined =>
  definitions[name] === undefined ? undefined : { id: `aud_${name}`, name, expression: definitions[name] };
const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
};

describe('@name in the grammar', () => {
  it('parses a bare @name as an audience, a quoted one as a code or variable', () => {
    expect(parseExpression('@heavy-streamers AND region=3')).toEqual({ and: [{ audience: 'heavy-streamers', at: 0 }, { var: 'region', in: ['3'], at: 21 }] });
    expect(parseExpression('"@home"=1')).toEqual({ var: '@home', in: ['1'], at: 0 });
    expect(parseExpression('"@home"')).toEqual({ code: '@home', at: 0 });
    expect(nameText('@home')).toBe('"@home"');
    expect(parseExpression(`${nameText('@home')}=1`)).toEqual({ var: '@home', in: ['1'], at: 0 });
    for (const bad of ['@Heavy', '@', '@a.b', '@a=1', '@a>=2']) expect(codeOf(() => parseExpression(bad)), bad).toBe('invalid_expression');
  });

  it('expands in parentheses, so precedence is that of the audience as a whole', () => {
    const lookup = lookupOf({ w: 'sex=2 OR age=25..40', x: '@w AND race=1' });
    expect(expandAudiences('NOT @w AND @x', lookup).text).toBe('NOT (sex=2 OR age=25..40) AND ((sex=2 OR age=25..40) AND race=1)');
    expect(expandAudiences('"@w"=1 OR x="@w"', lookup).text).toBe('"@w"=1 OR x="@w"');
    expect(expandAudiences('@x', lookup).audiences.map((used) => [used.audience.name, used.named])).toEqual([['w', 'x'], ['x', 'x']]);
  });

  it('refuses unknown audiences, cycles, deep chains and oversized expansions without showing a definition', () => {
    expect(codeOf(() => expandAudiences('@nope', lookupOf({})))).toBe('unknown_audience');
    expect(() => expandAudiences('@a', lookupOf({ a: '@b AND sex=1', b: '@a' }))).toThrow('@a -> @b -> @a');
    const chain = Object.fromEntries(Array.from({ length: MAX_AUDIENCE_DEPTH + 2 }, (_, i) => [`c${i}`, i === MAX_AUDIENCE_DEPTH + 1 ? 'sex=1' : `@c${i + 1}`]));
    expect(() => expandAudiences('@c0', lookupOf(chain))).toThrow(`more than ${MAX_AUDIENCE_DEPTH} deep`);
    const wide = { w: Array.from({ length: 30 }, (_, i) => `v${i}=1`).join(' OR '), v: Array.from({ length: 5 }, () => '@w').join(' OR ') };
    let message = '';
    try {
      expandAudiences('@v', lookupOf(wide));
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("past the grammar's bounds");
    expect(message).not.toContain('v1=1');
  });

  it('the library refuses an unexpanded audience with unknown_audience', () => {
    const resolver = new Resolver({ variables: [], codes: [] });
    expect(codeOf(() => resolver.resolve('@w'))).toBe('unknown_audience');
  });
});
