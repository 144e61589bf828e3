import type { WeightReport } from '../facade/weight.js';
import { formatTable } from './format-table.js';
import { formatNumber } from '../text/number-text.js';

const g = (value: number) => (Math.abs(value) >= 1e6 || (value !== 0 && Math.abs(value) < 1e-3) ? value.toExponential(3) : formatNumber(value, 4));

/** `crosstab weight`'s report as text tables on stdout. */
export function printWeightReport(report: WeightReport): void {
  const out = process.stdout;
  const baseName = report.baseWeight ?? 'unit weights';
  const where = report.written === 'weights-file' ? `the weights file ${report.out}` : report.out;
  out.write(`${report.name}: ${report.method} from ${baseName}, ${formatNumber(report.respondents, 0)} respondents -> ${where} (${formatNumber(report.bytes / 1e6)} MB)\n`);
  if (report.trimmed > 0) out.write(`trimmed ${formatNumber(report.trimmed, 0)} weights to ${report.trim!.join('..')}\n`);
  for (const set of report.sets) {
    out.write(`\n${set.group === undefined ? '' : `group ${set.group}: `}${set.converged ? 'converged' : 'did not converge'} in ${set.iterations} iteration${set.iterations === 1 ? '' : 's'} (${formatNumber(set.respondents, 0)} respondents)\n`);
    const rows = set.margins.flatMap((margin) =>
      margin.categories.map((c) => [margin.variables.join(' x '), c.category.join(' x '), g(c.target), g(c.weighted), g(c.deviation)]),
    );
    out.write(`${formatTable(['margin', 'category', 'target', 'weighted', 'deviation'], rows)}\n`);
    for (const margin of set.margins) out.write(`max deviation ${margin.variables.join(' x ')}: ${g(margin.maxDeviation)} (${g(margin.maxRelativeDeviation)} relative)\n`);
  }
  const spread = (name: string, s: WeightReport['weights']) => [name, g(s.min), g(s.max), Number.isFinite(s.ratio) ? g(s.ratio) : 'inf', g(s.mean), formatNumber(s.designEffect, 4), formatNumber(s.effectiveSize, 1), `${formatNumber(100 * s.efficiency, 1)}%`];
  out.write(`\n${formatTable(['weights', 'min', 'max', 'max/min', 'mean', 'Kish deff', 'effective n', 'efficiency'], [spread(baseName, report.baseWeights), spread(report.name, report.weights)])}\n`);
  for (const variable of report.variables) {
    const rows = variable.values.map((v) => [v.label === undefined ? v.value : `${v.value}=${v.label}`, formatNumber(v.respondents, 0), g(v.base), g(v.weighted), g(v.mean), g(v.min), g(v.max)]);
    out.write(`\n${formatTable([variable.variable, 'respondents', report.baseWeight ?? 'unweighted', report.name, 'mean', 'min', 'max'], rows)}\n`);
  }
}

