/**
 * A saved table's audiences: its expressions' `@name`s mean the audiences of those names its
 * owner sees (their own and the account's shared ones), since those computed its stored
 * result. Another user who opens it sees that result, and may compute it again, only while each
 * `@name` means the same audience for them; otherwise the table is refused for them, never
 * shown with a note about, or computed with, an audience of theirs. An audience edited since
 * the result was computed makes the stored figures those of another definition, and one gone
 * leaves them answering a question nobody can ask any more.
 */
import { expandAudiences, isCrosstabError } from '../index.js';
import { audienceLookup, topNames } from '../http/audience-expansion.js';
import type { AudienceRecord, AudienceViewer } from '../keys/index.js';

/** The user who saved a table (SavedTable's fields). */
export interface TableOwner {
  accountId: string;
  userId: string;
  /** Their e-mail. */
  owner: string;
}

/** The audiences a table's expressions use, read for its owner and for the user opening it (the same read when they are one). */
export interface TableAudienceReads {
  owner: readonly AudienceRecord[];
  viewer: readonly AudienceRecord[];
}

/** What the audiences of a saved table say about it now. */
export interface StoredAudiences {
  /** The table's audiences (directly or through each other) changed after the result was computed, in the order they are used. */
  changed: AudienceRecord[];
  /**
   * Why the table cannot be used now: an audience gone or renamed (the expansion's message,
   * naming it), or an `@name` that means another audience, or none, for the viewer.
   */
  problem?: string;
}

const idsOf = (name: string, lookup: ReturnType<typeof audienceLookup>): string => expandAudiences(`@${name}`, lookup).audiences.map((used) => used.audience.id).join(' ');

/**
 * `texts` (a saved table's expressions) expanded as its owner's, each audience used compared
 * with `computedAt` (null: none is changed), and each `@name` as `viewer` would expand it
 * compared with the owner's.
 */
export function storedAudiences(texts: readonly string[], reads: TableAudienceReads, table: TableOwner, viewer: AudienceViewer, computedAt: string | null): StoredAudiences {
  const owners = audienceLookup(reads.owner, { accountId: table.accountId, userId: table.userId });
  const since = computedAt === null ? Number.POSITIVE_INFINITY : Date.parse(computedAt);
  const changed = new Map<string, AudienceRecord>();
  const using = texts.filter((text) => text.includes('@'));
  const result = (problem?: string): StoredAudiences => ({ changed: [...changed.values()], ...(problem === undefined ? {} : { problem }) });
  try {
    for (const text of using) {
      for (const { audience } of expandAudiences(text, owners).audiences) {
        const record = reads.owner.find((candidate) => candidate.id === audience.id);
        if (record !== undefined && Date.parse(record.updatedAt) > since) changed.set(record.id, record);
      }
    }
  } catch (error) {
    if (!isCrosstabError(error)) throw error;
    return result(error.message);
  }
  if (viewer.userId === table.userId) return result();
  const theirs = audienceLookup(reads.viewer, viewer);
  for (const name of new Set(using.flatMap(topNames))) {
    try {
      if (idsOf(name, theirs) !== idsOf(name, owners)) return result(`@${name} means another audience for you than for ${table.owner}, who saved the table`);
    } catch (error) {
      if (!isCrosstabError(error)) throw error;
      return result(error.message);
    }
  }
  return result();
}

/** `2026-11-30 14:05 UTC` of an ISO time. */
export const minuteText = (iso: string): string => `${iso.replace('T', ' ').slice(0, 16)} UTC`;

const changedItems = (stored: StoredAudiences): string[] => stored.changed.map((audience) => `@${audience.name} (${minuteText(audience.updatedAt)})`);

/** The page's words for a stored result whose audiences changed since it was computed (undefined when none did). */
export function staleResultText(stored: StoredAudiences, computedAt: string): string | undefined {
  if (stored.changed.length === 0) return undefined;
  const items = changedItems(stored);
  const which =
    items.length === 1
      ? `the audience @${stored.changed[0]!.name} it uses was changed since (${minuteText(stored.changed[0]!.updatedAt)})`
      : `the audiences it uses ${items.join(', ')} were changed since`;
  return `These figures are as of ${minuteText(computedAt)}, when the table was saved: ${which}, so they may not count whom ${items.length === 1 ? 'it counts' : 'they count'} now. Compute the table again for current figures.`;
}

/** The saved-tables list's words for a table its audiences refuse or date (undefined when they do neither). */
export function savedListNote(stored: StoredAudiences): string | undefined {
  if (stored.problem !== undefined) return `Cannot be opened: ${stored.problem}.`;
  if (stored.changed.length === 0) return undefined;
  return `Figures as of the save: ${stored.changed.length === 1 ? 'its audience' : 'its audiences'} ${changedItems(stored).join(', ')} changed since.`;
}

/** The refusal of a saved table whose audiences cannot be used now, as the opened page says it. */
export function audienceRefusalText(tableName: string, stored: StoredAudiences): string {
  return `The saved table ${tableName} uses saved audiences that cannot be used now (${stored.problem ?? ''}): it cannot be opened. Its owner can save it again with audiences everyone it is shared with may use, or delete it.`;
}
