// A JSON request body naming a member twice in one object is refused, wherever that object is.
import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../src/http/crosstab-request.js';

function duplicateOf(text: string): string | undefined {
  const parsed = parseJsonBody(Buffer.from(text));
  if ('json' in parsed) return undefined;
  expect(parsed.code).toBe('invalid_json');
  return /names "(.*)" twice/.exec(parsed.message)?.[1];
}

describe('parseJsonBody: duplicate member names', () => {
  it.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"a":1,"b":{"c":1,"c":2}}', 'c'],
    ['{"a":[{"x":1},{"y":1,"y":2}]}', 'y'],
    ['[[{"deep":{"k":1,"k":{}}}]]', 'k'],
    ['{"a":1,"\\u0061":2}', 'a'],
    ['{"__proto__":1,"__proto__":2}', '__proto__'],
    ['{ "s" : "x" , "s" : "y" }', 's'],
  ])('%s names %s twice', (text, name) => {
    expect(duplicateOf(text)).toBe(name);
  });

  it.each([
    '{"a":1,"b":{"a":1},"c":[{"a":1},{"a":2}]}',
    '{"a":"b:","b":"a\\":"}',
    '{"TargetCodes":["SurveyCode:","x"],"SurveyCode":"GSS"}',
    '{"":1,"e":{"":2}}',
    '["a","a",{"a":1}]',
    '"text"',
    '{}',
  ])('%s names none twice', (text) => {
    const parsed = parseJsonBody(Buffer.from(text));
    expect(parsed).toEqual({ json: JSON.parse(text) });
  });

  it('reads a Uint8Array that is not a Buffer, and a byte order mark', () => {
    const bytes = new TextEncoder().encode('\ufeff{"a":[1,2]}');
    const view = new Uint8Array(bytes.buffer.slice(0), 0, bytes.byteLength);
    expect(parseJsonBody(view)).toEqual({ json: { a: [1, 2] } });
  });
});
