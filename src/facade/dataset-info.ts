import { AXIS_LIMIT } from '../dataset/format.js';
import type { LoadedDataset } from '../dataset/file/reader.js';
import { DEFAULT_MISSING_LABEL, type DatasetInfo, type StabilityLevel, type StabilityThresholds, type VariableInfo } from './types.js';


/** The dataset's description, without its design (added by the Dataset, which computes the PSUs). */
export function describeDataset(data: Pick<LoadedDataset, 'meta' | 'checksum' | 'weightsFile'>): Omit<DatasetInfo, 'design'> {
  const { meta } = data;
  const variables = meta.variables.map((stored): VariableInfo => {
    const variable: VariableInfo = {
      name: stored.name,
      kind: stored.kind,
      group: stored.group,
      distinct: stored.values.length,
      missing: stored.missing,
    };
    if (stored.label !== undefined) variable.label = stored.label;
    if (stored.multi !== undefined) variable.multi = { numeric: stored.multi.numeric, ...stored.multi.source, columns: [...stored.multi.source.columns] };
    if ((stored.kind === 'numeric' || stored.multi?.numeric === true) && stored.values.length > 0) {
      variable.min = Number(stored.values[0]);
      variable.max = Number(stored.values[stored.values.length - 1]);
    }
    if (stored.atLeast !== undefined) variable.rangeIndex = true;
    if (stored.values.length <= AXIS_LIMIT) {
      variable.values = stored.values.map((value, i) => {
        const label = stored.valueLabels?.[value];
        return label === undefined ? { value, respondents: stored.counts[i]! } : { value, label, respondents: stored.counts[i]! };
      });
    }
    return variable;
  });
  const groups = [...new Set([...meta.variables.map((v) => v.group), ...meta.codes.map((c) => c.group)])].sort();
  return {
    format: meta.format,
    survey: meta.survey,
    name: meta.name,
    units: meta.units,
    respondents: meta.respondents,
    weights: meta.weights.map((weight) => weight.name),
    stability: { ...meta.stability },
    variables,
    codes: meta.codes.map((code) => ({ ...code })),
    groups,
    skipped: meta.skipped.map((entry) => ({ column: entry.column, reason: entry.reason })),
    source: meta.source,
    createdAt: meta.createdAt,
    checksum: data.checksum,
    ...(data.weightsFile
      ? { weightsFile: { file: data.weightsFile.path, weights: [...data.weightsFile.weights], checksum: data.weightsFile.checksum, datasetChecksum: data.weightsFile.datasetChecksum, createdAt: data.weightsFile.createdAt } }
      : {}),
    missingLabel: meta.missingLabel ?? DEFAULT_MISSING_LABEL,
    ...(meta.id === undefined ? {} : { idColumn: meta.id.column }),
  };
}

export function stabilityOf(respondents: number, thresholds: StabilityThresholds): StabilityLevel {
  if (respondents <= thresholds.veryUnstableMax) return 'very-unstable';
  if (respondents <= thresholds.cautionMax) return 'caution';
  return 'stable';
}
