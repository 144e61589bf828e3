/**
 * A bounded map that forgets its least recently used entry when full: a burst of new keys
 * pushes out only the entries nobody used lately, never the whole cache.
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The entry of `key`, now the most recently used one. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // A Map iterates in insertion order: re-inserting moves the key to the young end.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** The entry of `key` without making it recently used. */
  peek(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(key, value);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
