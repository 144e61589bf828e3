import { afterEach, describe, expect, it, vi } from 'vitest';
import { isoNow } from '../../src/http/clock.js';

describe('isoNow', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is new Date().toISOString() of the current millisecond, made again when the millisecond changes', () => {
    vi.useFakeTimers();
    const start = Date.UTC(2026, 10, 29, 23, 59, 59, 998);
    for (let ms = start; ms < start + 5; ms++) {
      vi.setSystemTime(ms);
      expect(isoNow()).toBe(new Date(ms).toISOString());
      expect(isoNow()).toBe(new Date(ms).toISOString());
    }
    vi.setSystemTime(start - 86_400_000);
    expect(isoNow()).toBe(new Date(start - 86_400_000).toISOString());
  });
});
