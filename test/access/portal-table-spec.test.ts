// The Tables page's Rows and Columns lines: `Label = expression`, a whole variable, or an
// expression; a name in double quotes before ` = ` (as the catalog and crosstab info print a
// name with spaces) is the start of an expression, not a label.
import { describe, expect, it } from 'vitest';
import { axisEntry } from '../../src/portal/table-spec.js';
import { parseExpression } from '../../src/query/parse.js';

const names = { variables: new Set(['two words', 'sex', 'NOT']), codes: new Set(['BA+']) };

describe('a Rows or Columns line of the Tables page', () => {
  it('reads a quoted name before " = " as an expression that parses, not as a label', () => {
    for (const line of ['"two words" = 1', '"NOT" = 1,2', '"two wrds" = 1', '"say \\"hi\\"" = 1']) {
      expect(axisEntry(line, names), line).toEqual({ Expression: line });
    }
    expect(parseExpression('"two words" = 1')).toMatchObject({ var: 'two words', in: ['1'] });
  });

  it('keeps the other forms: a label, a whole variable, an expression', () => {
    expect(axisEntry('Degree: BA+ = degree=3,4', names)).toEqual({ Expression: 'degree=3,4', Label: 'Degree: BA+' });
    expect(axisEntry('Say "hi" = sex=1', names)).toEqual({ Expression: 'sex=1', Label: 'Say "hi"' });
    expect(axisEntry('two words', names)).toEqual({ Variable: 'two words' });
    expect(axisEntry('sex = 1', names)).toEqual({ Expression: 'sex = 1' });
    expect(axisEntry('BA+ = sex=2', names)).toEqual({ Expression: 'BA+ = sex=2' });
  });
});
