import { DEFAULT_GROUP, DEFAULT_STABILITY, type StoredMeta } from '../format.js';

/** A shell word, quoted when it needs to be. */
function word(text: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
export { word as shellWord };

/**
 * The `crosstab build` command that rebuilds a dataset from the metadata an older format
 * left in it (survey, name, weights, units, thresholds), or undefined when the metadata
 * cannot be read. The input is named as the dataset recorded it (its file name); a codebook
 * flag is added when the dataset had codes or groups, since the codebook's path is not kept.
 */
export function rebuildCommand(path: string, metaJson: string): string | undefined {
  let meta: Partial<StoredMeta>;
  try {
    meta = JSON.parse(metaJson) as Partial<StoredMeta>;
  } catch {
    return undefined;
  }
  if (typeof meta.survey !== 'string' || !Array.isArray(meta.weights) || typeof meta.source !== 'string') return undefined;
  const parts = ['crosstab', 'build', word(meta.source)];
  const design = meta.design;
  const replicates = new Set(design?.replicates?.weights ?? []);
  for (const weight of meta.weights) if (!replicates.has(String(weight?.name))) parts.push('--weight', word(String(weight?.name)));
  parts.push('--survey', word(meta.survey));
  if (typeof meta.name === 'string' && meta.name !== meta.survey) parts.push('--name', word(meta.name));
  if (typeof meta.units === 'number' && meta.units !== 1) parts.push('--units', String(meta.units));
  const stability = meta.stability;
  if (stability && (stability.cautionMax !== DEFAULT_STABILITY.cautionMax || stability.veryUnstableMax !== DEFAULT_STABILITY.veryUnstableMax)) {
    parts.push('--unstable-max', String(stability.cautionMax), '--very-unstable-max', String(stability.veryUnstableMax));
  }
  if (typeof meta.id?.column === 'string') parts.push('--id', word(meta.id.column));
  if (design?.strata) parts.push('--strata', word(design.strata));
  if (design?.psu) parts.push('--psu', word(design.psu));
  if (design?.nest) parts.push('--nest');
  if (design?.fpc) parts.push('--fpc', word(design.fpc));
  const rep = design?.replicates;
  if (rep) {
    parts.push('--replicate-weights', ...rep.weights.map(word), '--replicate-type', word(rep.type), '--scale', String(rep.scale));
    if (rep.rscales.length > 0) parts.push('--rscales', rep.rscales.join(','));
    if (rep.rho !== undefined) parts.push('--rho', String(rep.rho));
    if (rep.mse) parts.push('--mse');
    parts.push('--degf', String(rep.degf));
  }
  const grouped = (meta.variables ?? []).some((variable) => variable.group !== DEFAULT_GROUP || variable.label !== undefined);
  if ((meta.codes ?? []).length > 0 || grouped) parts.push('--codebook', 'CODEBOOK.json');
  parts.push('--out', word(path));
  const note = parts.includes('CODEBOOK.json') ? ' (CODEBOOK.json: the codebook it was built with)' : '';
  return `${parts.join(' ')}${note}`;
}
