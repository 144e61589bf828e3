import { randomBytes } from 'node:crypto';
import type { AudienceCheck, AudienceInput, AudienceRecord, AudienceRefusal, AudienceStore, AudienceViewer } from '../keys/index.js';
import { mayEdit } from '../keys/index.js';
import type { Database, Queryable } from './database.js';
import { iso } from './accounts.js';

/** Most audiences one account holds, all surveys and users together: bounds every listing and lookup. */
export const MAX_AUDIENCES_PER_ACCOUNT = 500;
const ID = /^aud_[0-9a-f]{16}$/;

interface AudienceRow {
  id: string;
  survey: string;
  name: string;
  expression: string;
  label: string | null;
  shared: boolean;
  user_id: string | null;
  email: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS = 'a.id, a.survey, a.name, a.expression, a.label, a.shared, a.user_id, u.email, a.created_at, a.updated_at';
const FROM = 'FROM audiences a LEFT JOIN users u ON u.id = a.user_id';
/** The audiences $1 (account) and $2 (user, or null) may see: shared ones and their own. */
const VISIBLE = 'a.account_id = $1 AND (a.shared OR a.user_id = $2)';

const toRecord = (row: AudienceRow): AudienceRecord => ({
  id: row.id,
  survey: row.survey,
  name: row.name,
  expression: row.expression,
  label: row.label,
  shared: row.shared,
  ownerId: row.user_id,
  owner: row.email,
  createdAt: iso(row.created_at) as string,
  updatedAt: iso(row.updated_at) as string,
});

const viewerParams = (viewer: AudienceViewer): [string, string | null] => [viewer.accountId, viewer.userId ?? null];

/** The audiences `viewer` may use: of one survey, or of all (undefined), by survey and name. */
export async function listAudiences(db: Queryable, viewer: AudienceViewer, survey?: string): Promise<AudienceRecord[]> {
  const { rows } =
    survey === undefined
      ? await db.query<AudienceRow>(`SELECT ${COLUMNS} ${FROM} WHERE ${VISIBLE} ORDER BY a.survey, a.name, a.shared, a.id`, viewerParams(viewer))
      : await db.query<AudienceRow>(`SELECT ${COLUMNS} ${FROM} WHERE ${VISIBLE} AND a.survey = $3 ORDER BY a.name, a.shared, a.id`, [...viewerParams(viewer), survey]);
  return rows.map(toRecord);
}

/** Those of `names` the viewer may use in `survey`. */
export async function audiencesNamed(db: Queryable, viewer: AudienceViewer, survey: string, names: readonly string[]): Promise<AudienceRecord[]> {
  if (names.length === 0) return [];
  const { rows } = await db.query<AudienceRow>(`SELECT ${COLUMNS} ${FROM} WHERE ${VISIBLE} AND a.survey = $3 AND a.name = ANY($4::text[])`, [...viewerParams(viewer), survey, [...names]]);
  return rows.map(toRecord);
}

/** `@name` in a stored expression: every reference the grammar reads (a quoted "@x" matches too, which only reads one audience more). */
const REFERENCE = '@([a-z0-9][a-z0-9_-]{0,63})';

/**
 * Those of `names` the viewer may use in `survey`, and every audience the viewer may use that
 * their expressions name, through each other up to `depth` levels below them: one statement,
 * so one snapshot of the table (an edit committed meanwhile is seen whole or not at all).
 */
export async function audiencesUsed(db: Queryable, viewer: AudienceViewer, survey: string, names: readonly string[], depth: number): Promise<AudienceRecord[]> {
  if (names.length === 0) return [];
  const { rows } = await db.query<AudienceRow>(
    `WITH RECURSIVE used (id, depth) AS (
       SELECT a.id, 0 FROM audiences a WHERE ${VISIBLE} AND a.survey = $3 AND a.name = ANY($4::text[])
       UNION
       SELECT b.id, used.depth + 1
         FROM used JOIN audiences a ON a.id = used.id
         CROSS JOIN LATERAL regexp_matches(a.expression, '${REFERENCE}', 'g') AS reference (name)
         JOIN audiences b ON b.account_id = $1 AND (b.shared OR b.user_id = $2) AND b.survey = $3 AND b.name = reference.name[1]
        WHERE used.depth < $5
     )
     SELECT ${COLUMNS} ${FROM} WHERE a.id IN (SELECT id FROM used)`,
    [...viewerParams(viewer), survey, [...names], depth],
  );
  return rows.map(toRecord);
}

/** One audience the viewer may see; undefined otherwise (another account's, another user's private one, or none). */
export async function audienceById(db: Queryable, viewer: AudienceViewer, id: string): Promise<AudienceRecord | undefined> {
  if (!ID.test(id)) return undefined;
  const { rows } = await db.query<AudienceRow>(`SELECT ${COLUMNS} ${FROM} WHERE ${VISIBLE} AND a.id = $3`, [...viewerParams(viewer), id]);
  return rows[0] === undefined ? undefined : toRecord(rows[0]);
}

/**
 * Whether `name` would collide with an audience the viewer sees in `survey` (their own, or a
 * shared one), or with any shared one when the audience is shared: never with another user's
 * private audience, whose name the viewer must not learn (their own private one goes first
 * when they use the name).
 */
async function nameTaken(tx: Queryable, viewer: AudienceViewer, input: AudienceInput, except: string | null): Promise<AudienceRefusal | undefined> {
  const { rows } = await tx.query<{ shared: boolean }>(
    `SELECT a.shared FROM audiences a WHERE ${VISIBLE} AND a.survey = $3 AND a.name = $4 AND a.id IS DISTINCT FROM $5 LIMIT 1`,
    [...viewerParams(viewer), input.survey, input.name, except],
  );
  if (rows[0] === undefined) return undefined;
  const whose = rows[0].shared ? 'a shared audience of your account' : 'one of your own audiences';
  return { refused: 'conflict', message: `@${input.name} is already ${whose} for survey ${input.survey}.` };
}

/**
 * Locks the account's row: writes of one account's audiences take turns (on every replica), so
 * its count stays bounded and each save's check reads what the others committed. The first
 * statement of the transaction: READ COMMITTED whatever the server's default, so that the reads
 * after the lock see what was committed while this one waited (a REPEATABLE READ snapshot is
 * taken before the wait and would not).
 */
async function lockAccount(tx: Queryable, accountId: string): Promise<void> {
  await tx.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
  await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
}

/** `check` over the survey's audiences as this transaction reads them once it holds the account's lock (committed writes only, none in progress). */
async function checkLocked<Refusal>(tx: Queryable, viewer: AudienceViewer, survey: string, check: AudienceCheck<Refusal> | undefined): Promise<Refusal | undefined> {
  return check === undefined ? undefined : check(await listAudiences(tx, viewer, survey));
}

export async function createAudience<Refusal = never>(
  db: Database,
  viewer: AudienceViewer,
  input: AudienceInput,
  limit = MAX_AUDIENCES_PER_ACCOUNT,
  check?: AudienceCheck<Refusal>,
): Promise<AudienceRecord | AudienceRefusal | Refusal> {
  const id = `aud_${randomBytes(8).toString('hex')}`;
  return db.transaction(async (tx) => {
    await lockAccount(tx, viewer.accountId);
    const refusal = await checkLocked(tx, viewer, input.survey, check);
    if (refusal !== undefined) return refusal;
    const taken = await nameTaken(tx, viewer, input, null);
    if (taken) return taken;
    const { rows } = await tx.query<{ count: string | number }>('SELECT count(*) AS count FROM audiences WHERE account_id = $1', [viewer.accountId]);
    if (Number(rows[0]?.count ?? 0) >= limit) {
      return { refused: 'limit', message: `Your account holds ${limit} audiences, the most it may; delete one it no longer needs first.` } satisfies AudienceRefusal;
    }
    await tx.query(
      'INSERT INTO audiences (id, account_id, user_id, survey, name, expression, label, shared) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [id, viewer.accountId, viewer.userId ?? null, input.survey, input.name, input.expression, input.label, input.shared],
    );
    return (await audienceById(tx, viewer, id)) as AudienceRecord;
  });
}

export async function updateAudience<Refusal = never>(
  db: Database,
  viewer: AudienceViewer,
  id: string,
  input: AudienceInput,
  check?: AudienceCheck<Refusal>,
): Promise<AudienceRecord | AudienceRefusal | Refusal | undefined> {
  return db.transaction(async (tx) => {
    await lockAccount(tx, viewer.accountId);
    const current = await audienceById(tx, viewer, id);
    if (current === undefined || !mayEdit(viewer, current)) return undefined;
    const refusal = await checkLocked(tx, viewer, input.survey, check);
    if (refusal !== undefined) return refusal;
    const taken = await nameTaken(tx, viewer, input, id);
    if (taken) return taken;
    await tx.query('UPDATE audiences SET name = $2, expression = $3, label = $4, shared = $5, updated_at = now() WHERE id = $1', [id, input.name, input.expression, input.label, input.shared]);
    return (await audienceById(tx, viewer, id)) as AudienceRecord;
  });
}

export async function deleteAudience(db: Database, viewer: AudienceViewer, id: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    await lockAccount(tx, viewer.accountId);
    const current = await audienceById(tx, viewer, id);
    if (current === undefined || !mayEdit(viewer, current)) return false;
    await tx.query('DELETE FROM audiences WHERE id = $1', [id]);
    return true;
  });
}

/** The access database as the REST adapter's AudienceStore. */
export class DbAudienceStore implements AudienceStore {
  constructor(
    private readonly db: Database,
    readonly maxPerAccount = MAX_AUDIENCES_PER_ACCOUNT,
  ) {}
  list(viewer: AudienceViewer, survey: string | undefined): Promise<AudienceRecord[]> {
    return listAudiences(this.db, viewer, survey);
  }
  byNames(viewer: AudienceViewer, survey: string, names: readonly string[]): Promise<AudienceRecord[]> {
    return audiencesNamed(this.db, viewer, survey, names);
  }
  closure(viewer: AudienceViewer, survey: string, names: readonly string[], depth: number): Promise<AudienceRecord[]> {
    return audiencesUsed(this.db, viewer, survey, names, depth);
  }
  get(viewer: AudienceViewer, id: string): Promise<AudienceRecord | undefined> {
    return audienceById(this.db, viewer, id);
  }
  create<Refusal>(viewer: AudienceViewer, input: AudienceInput, check?: AudienceCheck<Refusal>): Promise<AudienceRecord | AudienceRefusal | Refusal> {
    return createAudience(this.db, viewer, input, this.maxPerAccount, check);
  }
  update<Refusal>(viewer: AudienceViewer, id: string, input: AudienceInput, check?: AudienceCheck<Refusal>): Promise<AudienceRecord | AudienceRefusal | Refusal | undefined> {
    return updateAudience(this.db, viewer, id, input, check);
  }
  delete(viewer: AudienceViewer, id: string): Promise<boolean> {
    return deleteAudience(this.db, viewer, id);
  }
}
