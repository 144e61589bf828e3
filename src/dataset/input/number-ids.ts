/**
 * The ids of numbers a column encoder has already numbered, by value: open addressing over
 * the numbers' 64-bit patterns, in front of the encoder's Map. A column of many distinct
 * numbers that change from row to row (incomes, Parquet and Arrow INT64 and DOUBLE columns)
 * is looked up here at a few nanoseconds per row instead of a Map lookup's tens.
 *
 * Only a cache: an id is put here after the encoder has numbered the value, and a value not
 * here is looked up the slow way. `-0` is `0`, as it is for a Map; NaN is never asked (blank).
 */
export class NumberIds {
  private keys = new Float64Array(1024);
  /** 0: empty slot (ids start at 1). */
  private ids = new Uint32Array(1024);
  private mask = 1023;
  private size = 0;
  private readonly bits = new Float64Array(1);
  private readonly halves = new Int32Array(this.bits.buffer);

  /** The id of `value`, or 0 when it has none here yet. */
  get(value: number): number {
    const key = value === 0 ? 0 : value;
    let slot = this.slotOf(key);
    for (;;) {
      const id = this.ids[slot]!;
      if (id === 0 || this.keys[slot] === key) return id;
      slot = (slot + 1) & this.mask;
    }
  }

  /** Records `value`'s id (not 0); the value must not be here yet. */
  set(value: number, id: number): void {
    if ((this.size + 1) * 2 > this.ids.length) this.grow();
    this.place(value === 0 ? 0 : value, id);
    this.size++;
  }

  private place(key: number, id: number): void {
    let slot = this.slotOf(key);
    while (this.ids[slot] !== 0) slot = (slot + 1) & this.mask;
    this.keys[slot] = key;
    this.ids[slot] = id;
  }

  private slotOf(key: number): number {
    this.bits[0] = key;
    // Both halves mixed: whole numbers differ in the high half, fractions in the low one.
    const mixed = Math.imul(this.halves[0]! ^ Math.imul(this.halves[1]!, 0x27d4eb2d), 0x9e3779b1);
    return (mixed ^ (mixed >>> 15)) & this.mask;
  }

  private grow(): void {
    const keys = this.keys;
    const ids = this.ids;
    this.keys = new Float64Array(keys.length * 2);
    this.ids = new Uint32Array(ids.length * 2);
    this.mask = this.ids.length - 1;
    for (let slot = 0; slot < ids.length; slot++) if (ids[slot] !== 0) this.place(keys[slot]!, ids[slot]!);
  }
}
