/** Something SQL can be sent to: the database, or one transaction of it. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<{ rows: Row[] }>;
}

/**
 * The access store's database: PostgreSQL, either embedded (PGlite, one process, a folder)
 * or a server reached through `pg` (any number of processes). Both speak the same SQL.
 */
export interface Database extends Queryable {
  readonly kind: 'embedded' | 'postgres';
  /** The folder or the URL without its password. */
  readonly location: string;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it rejects. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Embedded only: runs `statement` (`COPY table (columns) FROM STDIN`) with `data` in COPY's
   * text format (tab-separated, one row a line, `\\` `\t` `\n` `\r` escaped) as one statement,
   * committed on its own, and resolves to the number of rows inserted.
   */
  copyFrom?(statement: string, data: string): Promise<number>;
  close(): Promise<void>;
}
