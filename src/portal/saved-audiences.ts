/**
 * A saved table's stored result against the saved audiences its expressions use now: a result
 * counts the respondents each audience named when it was computed, so an audience edited since
 * makes the stored figures those of another definition, and one gone leaves them answering a
 * question nobody can ask any more.
 */
import { expandAudiences, isCrosstabError } from '../index.js';
import { audienceLookup, audienceViewer } from '../http/audience-expansion.js';
import type { ApiKeyRecord } from '../http/index.js';
import type { AudienceRecord } from '../keys/index.js';

/** What the audiences of a stored result say about it now. */
export interface StoredAudiences {
  /** Audiences the expressions use (directly or through each other) changed after `computedAt`, in the order they are used. */
  changed: AudienceRecord[];
  /** Why the expressions cannot be expanded now (an audience gone or renamed): the expansion's message, naming it. */
  problem?: string;
}

/** Expands `texts` with the audiences `read` for `caller`, as a table computed now would, and compares each audience used with `computedAt`. */
export function storedAudiences(texts: readonly string[], read: readonly AudienceRecord[], caller: ApiKeyRecord, computedAt: string | null): StoredAudiences {
  const viewer = audienceViewer(caller);
  if (viewer === undefined || computedAt === null) return { changed: [] };
  const lookup = audienceLookup(read, viewer);
  const since = Date.parse(computedAt);
  const changed = new Map<string, AudienceRecord>();
  for (const text of texts) {
    if (!text.includes('@')) continue;
    try {
      for (const { audience } of expandAudiences(text, lookup).audiences) {
        const record = read.find((candidate) => candidate.id === audience.id);
        if (record !== undefined && Date.parse(record.updatedAt) > since) changed.set(record.id, record);
      }
    } catch (error) {
      if (!isCrosstabError(error)) throw error;
      return { changed: [...changed.values()], problem: error.message };
    }
  }
  return { changed: [...changed.values()] };
}

/** `2026-11-30 14:05 UTC` of an ISO time. */
export const minuteText = (iso: string): string => `${iso.replace('T', ' ').slice(0, 16)} UTC`;

/** The page's words for a stored result whose audiences changed since it was computed (undefined when none did). */
export function staleResultText(stored: StoredAudiences, computedAt: string): string | undefined {
  if (stored.changed.length === 0) return undefined;
  const items = stored.changed.map((audience) => `@${audience.name} (${minuteText(audience.updatedAt)})`);
  const which =
    items.length === 1
      ? `the audience @${stored.changed[0]!.name} it uses was changed since (${minuteText(stored.changed[0]!.updatedAt)})`
      : `the audiences it uses ${items.join(', ')} were changed since`;
  return `These figures are as of ${minuteText(computedAt)}, when the table was saved: ${which}, so they may not count whom ${items.length === 1 ? 'it counts' : 'they count'} now. Compute the table again for current figures.`;
}
