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

  it('a misspelt label suggests the label it is close to, and the hint names the labels', async () => {
    const error = await refusal('sex=Femal');
    expect(error.details.suggestions).toEqual(['Female']);
    expect(error.message).toContain('did you mean "Female"?');
    expect(error.details.hint).toContain('1 (Male), 2 (Female)');
    expect((await refusal('relig=Catholik')).details.suggestions).toEqual(['Catholic']);
  });
});

describe('near names', () => {
  it.each([
    ['yaer=2024', 'year'],
    ['relgion=1', 'relig'],
    ['dgeree=1', 'degree'],
    ['polveiws=1', 'polviews'],
  ])('%s suggests %s', async (target, name) => {
    const error = await refusal(target);
    expect(error.code).toBe('unknown_variable');
    expect(error.details.suggestions).toContain(name);
  });
});

describe('hints name no command of one front end', () => {
  it.each(['sexx=1', 'sex=7', 'sex=Femal', 'age=200', 'NOPE'])('%s', async (target) => {
    const error = await refusal(target);
    expect(error.details.hint).toBeTruthy();
    expect(error.details.hint).not.toMatch(/crosstab /);
  });

  it('a small variable\'s values are named in the hint; a large one\'s range', async () => {
    expect((await refusal('race=7')).details.hint).toContain('1 (White), 2 (Black), 3 (Other)');
    expect((await refusal('age=200')).details.hint).toContain('from 18 to 89');
    expect((await refusal('sexx=1')).details.listed).toBe('variables');
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

  it('numbers with an exponent are numbers: sex=2e0 is sex=2, age=1.8e1..3e+1 is age=18..30', async () => {
    const written = await gss.crosstab({ base: '*', targets: ['sex=2e0', 'age=1.8e1..3e+1', 'age=-1e3..18', 'year=2.024E3'] });
    const plain = await gss.crosstab({ base: '*', targets: ['sex=2', 'age=18..30', 'age=..18', 'year=2024'] });
    expect(written.targets).toEqual(plain.targets);
  });

  it.each(['sex=0x2', 'sex=" 2"', 'sex=+2', 'sex=2.', 'sex=.5', 'sex=2e', 'year=..0x7e8'])('%s is not taken as a number', async (target) => {
    const error = await refusal(target);
    expect(error.code).toBe('invalid_expression');
  });

  it('0x2 suggests the plain number', async () => {
    expect((await refusal('sex=0x2')).details.hint).toContain('sex=2');
  });
});
