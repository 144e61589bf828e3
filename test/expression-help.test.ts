// Expressions as people write them: value labels, operators the grammar lacks, ranges written
// "3-4" or backwards, numbers in other notations. Each either means what was meant or says how
// to write it.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type CrosstabError, type Dataset } from '../src/index.js';

const paths = inject('testDatasets');
let gss: Dataset;

beforeAll(async () => {
  gss = await openDataset(paths.gss);
});
afterAll(() => gss?.close());

async function refusal(target: string): Promise<CrosstabError> {
  try {
    await gss.crosstab({ base: '*', targets: [target] });
  } catch (error) {
    return error as CrosstabError;
  }
  throw new Error(`${target} was accepted`);
}

describe('value labels in expressions', () => {
  it('sex=Female, sex=female and sex="Female" are sex=2; degree=Bachelor\'s..Graduate is degree=3..4', async () => {
    const byValue = await gss.crosstab({ base: 'year=2024', targets: ['sex=2', 'degree=3..4', 'race=1,2'] });
    const byLabel = await gss.crosstab({ base: 'year=2024', targets: ['sex=Female', 'degree=Bachelor\'s..Graduate', 'race=White,black'] });
    expect(byLabel.targets).toEqual(byValue.targets);
    expect((await gss.crosstab({ base: '*', targets: ['sex="Female"', 'sex=female'] })).targets.map((cell) => cell.respondents)).toEqual(
      (await gss.crosstab({ base: '*', targets: ['sex=2', 'sex=2'] })).targets.map((cell) => cell.respondents),
    );
  });

  it('an unknown label is an error that suggests labels', async () => {
    const error = await refusal('sex=Femal');
    expect(error.code).toBe('invalid_expression');
    expect(error.details.hint).toMatch(/value label/);
  });
});

describe('operators and notations the grammar does not have', () => {
  it.each([
    ['sex!=2', /NOT sex=value/],
    ['age>=18', /age=lo\.\./],
    ['age<=30', /age=\.\.hi/],
    ['age>17', /age=lo\.\./],
    ['age < 30', /age=\.\.hi/],
  ])('%s says how to write it', async (target, hint) => {
    const error = await refusal(target);
    expect(error.code).toBe('invalid_expression');
    expect(error.details.hint).toMatch(hint);
  });

  it('degree=3-4 says to write 3..4', async () => {
    const error = await refusal('degree=3-4');
    expect(error.code).toBe('invalid_expression');
    expect(error.details.hint).toContain('degree=3..4');
  });

  it('a reversed range is an error naming the right order', async () => {
    const error = await refusal('year=2024..2020');
    expect(error.code).toBe('invalid_expression');
    expect(error.message).toMatch(/reversed range/);
    expect(error.details.hint).toContain('year=2020..2024');
  });

  it.each(['sex=0x2', 'sex=2e0', 'sex=" 2"', 'sex=+2', 'sex=2.', 'year=..0x7e8'])('%s is not taken as a number', async (target) => {
    const error = await refusal(target);
    expect(error.code).toBe('invalid_expression');
  });

  it('0x2 suggests the plain number', async () => {
    expect((await refusal('sex=0x2')).details.hint).toContain('sex=2');
  });
});
