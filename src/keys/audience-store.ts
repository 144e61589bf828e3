/** Who asks for audiences: an account, and the user within it when the caller is one (a user's key, the portal). */
export interface AudienceViewer {
  accountId: string;
  /** Undefined for a key that belongs to no user and for single sign-on: such callers see shared audiences only. */
  userId?: string;
}

/** A saved audience as the stores hold it. */
export interface AudienceRecord {
  /** `aud_` and 16 hex digits. */
  id: string;
  survey: string;
  /** Written `@name` in expressions (AUDIENCE_NAME). */
  name: string;
  expression: string;
  label: string | null;
  /** Seen by every caller of the account; else only by its owner. */
  shared: boolean;
  /** The user who saved it (their id and e-mail), or null: saved by a key of no user, it belongs to the account. */
  ownerId: string | null;
  owner: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What a new audience, or an edit, says (an edit leaves out what stays). */
export interface AudienceInput {
  survey: string;
  name: string;
  expression: string;
  label: string | null;
  shared: boolean;
}

/** Why a store refused a write: the name is taken where the audience would go, or the account holds its most audiences. */
export type AudienceRefusal = { refused: 'conflict' | 'limit'; message: string };

/**
 * What a save checks against the audiences beside it (no loop, the audiences it uses there and
 * within the caller's groups): given the audiences of its survey the viewer may use, undefined
 * to write, or a refusal that the write returns as it is.
 */
export type AudienceCheck<Refusal> = (audiences: readonly AudienceRecord[]) => Refusal | undefined;

/**
 * Where the REST adapter keeps saved audiences (the access database implements it). Every
 * method sees only the viewer's account, and within it shared audiences and the viewer's own.
 */
export interface AudienceStore {
  /** Most audiences one account may hold (all surveys). */
  readonly maxPerAccount: number;
  /** The audiences the viewer may use, of one survey or (undefined) all, by name. */
  list(viewer: AudienceViewer, survey: string | undefined): Promise<AudienceRecord[]>;
  /** Those of `names` the viewer may use in `survey` (an own private one and a shared one may share a name). */
  byNames(viewer: AudienceViewer, survey: string, names: readonly string[]): Promise<AudienceRecord[]>;
  /**
   * Those of `names` the viewer may use in `survey` and every audience they use, through each
   * other up to `depth` levels below them (byNames's candidates for every `@name` their
   * expressions hold), all read at one moment: audiences using audiences never mix one from
   * before an edit with one from after another edit. A store without it is read level by
   * level with byNames.
   */
  closure?(viewer: AudienceViewer, survey: string, names: readonly string[], depth: number): Promise<AudienceRecord[]>;
  get(viewer: AudienceViewer, id: string): Promise<AudienceRecord | undefined>;
  /**
   * Saves a new audience. `check`, when given, runs inside the write with the survey's
   * audiences as the write finds them, while no other write of the account's audiences can
   * run (the access database locks the account's row): two saves at once, on one replica or
   * two, then never commit together what neither would alone (a loop of audiences using each
   * other, a use of one deleted meanwhile). A store that does not run it leaves the check
   * made before the write, which another write can pass at the same time.
   */
  create<Refusal>(viewer: AudienceViewer, input: AudienceInput, check?: AudienceCheck<Refusal>): Promise<AudienceRecord | AudienceRefusal | Refusal>;
  /** Replaces what an audience the viewer may edit says (`check` as for create); undefined when there is no such audience for them. */
  update<Refusal>(viewer: AudienceViewer, id: string, input: AudienceInput, check?: AudienceCheck<Refusal>): Promise<AudienceRecord | AudienceRefusal | Refusal | undefined>;
  /** Deletes an audience the viewer may edit (taking turns with the account's saves); false when there is none. */
  delete(viewer: AudienceViewer, id: string): Promise<boolean>;
}

/**
 * Whether `viewer` may edit or delete `audience`: its owner, or any caller of the account when
 * it has no owner (saved by a key of no user, shared).
 */
export function mayEdit(viewer: AudienceViewer, audience: AudienceRecord): boolean {
  return audience.ownerId === null ? audience.shared : audience.ownerId === viewer.userId;
}
