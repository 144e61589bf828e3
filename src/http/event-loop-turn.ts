/**
 * Resolves in the event loop's next check phase (setImmediate): the I/O callbacks already due
 * have run by then, and so has every callback queued with setImmediate before this one.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
