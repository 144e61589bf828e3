/**
 * The operator's word on a survey whose data the service cannot use (503 `dataset_unavailable`):
 * one `dataset_unusable` log event per fault (its file and reason), not one per request that
 * meets it, which the access log counts by its code. A fault seen again after a reload that
 * did not mend it is the same text, and stays told.
 */
export class DatasetFaultLog {
  private readonly told = new Set<string>();

  constructor(
    private readonly log: (event: { time: string; event: string; message: string }) => void,
    /** The most faults remembered: past it, a new fault is still told, an old one may be told again. */
    private readonly remembered = 1000,
  ) {}

  /** Logs `cause` unless it was logged already. */
  tell(cause: string): void {
    if (this.told.has(cause)) return;
    if (this.told.size >= this.remembered) this.told.clear();
    this.told.add(cause);
    this.log({ time: new Date().toISOString(), event: 'dataset_unusable', message: `${cause}; the survey answers 503 dataset_unavailable until its file is rebuilt and reloaded` });
  }
}
