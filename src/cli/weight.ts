import { type Command, InvalidArgumentError, Option } from 'commander';
import { CrosstabError } from '../errors.js';
import { weightDataset } from '../facade/weight.js';
import { WEIGHT_METHODS } from '../facade/weight-options.js';

/** The library's option names as the command's flags, for error messages. */
const FLAGS: Record<string, string> = { maxIterations: '--max-iterations', baseWeight: '--base-weight', bounds: '--bounds', trim: '--trim', epsilon: '--epsilon', method: '--method', name: '--name', out: '--out', targets: '--targets' };

function parsePair(flag: string) {
  return (value: string): [number, number] => {
    const parts = value.split(',').map((part) => Number(part.trim()));
    if (parts.length !== 2 || value.split(',').some((part) => part.trim() === '') || parts.some((part) => Number.isNaN(part))) {
      throw new InvalidArgumentError(`${flag} must be two numbers LO,HI, not "${value}"`);
    }
    return [parts[0]!, parts[1]!];
  };
}

function parseNumber(flag: string, integer: boolean) {
  return (value: string): number => {
    const number = Number(value);
    if (value.trim() === '' || !Number.isFinite(number) || (integer && !Number.isInteger(number))) throw new InvalidArgumentError(`${flag} must be a${integer ? ' whole' : ''} number, not "${value}"`);
    return number;
  };
}

export function registerWeightCommand(program: Command): void {
  program
    .command('weight')
    .description('weight a dataset to population targets (rake, post-stratify, calibrate): the new weight goes to the weights file beside it (or with --out into a new dataset file)')
    .argument('<dataset>', 'dataset file from `crosstab build`')
    .requiredOption('--targets <file>', 'targets JSON (docs/weighting.md)')
    .addOption(new Option('--method <method>', 'weighting method').choices(WEIGHT_METHODS).makeOptionMandatory())
    .requiredOption('--name <weight>', 'name of the new weight')
    .option('--out <file>', 'write a whole new dataset file (the input with the new weight added) instead of the weights file <dataset>.weights')
    .option('--bounds <lo,hi>', 'bounds on new/base weight for linear and logit calibration', parsePair('--bounds'))
    .option('--trim <lo,hi>', 'trim the new weights to [lo, hi], as R trimWeights()', parsePair('--trim'))
    .addOption(new Option('--base-weight <weight>', 'weight to start from (default: the dataset\'s first)').conflicts('unweighted'))
    .addOption(new Option('--unweighted', 'start from unit weights (every respondent 1), as R\'s svydesign() without weights').conflicts('baseWeight'))
    .option('--max-iterations <n>', 'most iterations (default 10 for rake, 50 for calibration)', parseNumber('--max-iterations', true))
    .option('--epsilon <e>', 'convergence threshold as R\'s (rake default 1, calibration 1e-7)', parseNumber('--epsilon', false))
    .option('--json', 'print the report as JSON')
    .addHelpText(
      'after',
      `
Without --out the dataset file is not rewritten: the new weight goes to <dataset>.weights,
which every command (and crosstab serve) opens with the dataset, checked against its
checksum and against the dataset it was made from. A dataset rebuilt, appended to or
replaced afterwards is refused with its old weights file: weight it again.

Examples:
  $ crosstab weight survey.arrow --targets targets.json --method rake --name wt_rake
  $ crosstab weight survey.arrow --targets targets.json --method rake --name wt_rake --out survey-raked.arrow`,
    )
    .action(async (path: string, flags) => {
      try {
        const report = await weightDataset(path, {
          targets: flags.targets,
          method: flags.method,
          name: flags.name,
          ...(flags.out === undefined ? {} : { out: flags.out }),
          ...(flags.bounds === undefined ? {} : { bounds: flags.bounds }),
          ...(flags.trim === undefined ? {} : { trim: flags.trim }),
          ...(flags.baseWeight === undefined ? {} : { baseWeight: flags.baseWeight }),
          ...(flags.unweighted === true ? { baseWeight: null } : {}),
          ...(flags.maxIterations === undefined ? {} : { maxIterations: flags.maxIterations }),
          ...(flags.epsilon === undefined ? {} : { epsilon: flags.epsilon }),
        });
        if (flags.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        // The text report's table layout (string-width, whose Intl.Segmenter loads ICU) only when it is printed.
        else (await import('./weight-text.js')).printWeightReport(report);
      } catch (error) {
        // Library option names as this command's flags.
        if (error instanceof CrosstabError && error.details.field !== undefined && FLAGS[error.details.field] !== undefined && error.details.problem !== undefined) {
          throw new CrosstabError(error.code, `${FLAGS[error.details.field]} ${error.details.problem}`, error.details);
        }
        throw error;
      }
    });
}
