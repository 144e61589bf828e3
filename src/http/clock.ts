/**
 * The current time as an ISO 8601 string (`new Date().toISOString()`), made once per
 * millisecond: every request stamps its log entry and its usage record, and under load many
 * requests fall in the same millisecond. The string is exactly what `new Date(ms)` gives.
 */
let lastMs = Number.NaN;
let lastIso = '';

export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}
