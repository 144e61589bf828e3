// The REST answer written directly (serviceResponseJson) against the object it stands for,
// stringified: every byte the same, for the numbers JSON writes specially and every ResultCode.
import { describe, expect, it } from 'vitest';
import { serviceResponseJson, toServiceResponse } from '../src/facade/service-shape.js';
import type { CrosstabResult } from '../src/index.js';
import { seededRandom } from './support/large-dataset.js';

const STABILITY = ['stable', 'caution', 'very-unstable'] as const;

function cell(weighted: number, respondents: number, stability: (typeof STABILITY)[number]): CrosstabResult['base'] {
  return { weighted, respondents, sumSqWeights: weighted, stability } as CrosstabResult['base'];
}

describe('serviceResponseJson', () => {
  it('writes what JSON.stringify writes of toServiceResponse, for special numbers and every ResultCode', () => {
    const special = [0, -0, 1, 0.1, 1 / 3, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, -1.5, NaN, Infinity, -Infinity, 2 ** 53 + 2, 1676.9026589173789];
    const random = seededRandom(41);
    const results: CrosstabResult[] = [];
    for (const weighted of special) {
      for (const units of [1, 1000, 0, NaN, 3]) {
        for (const respondents of [0, 1, 1823]) {
          for (const stability of STABILITY) {
            results.push({ base: cell(weighted, respondents, stability), targets: [cell(weighted, respondents, stability)], weight: 'w', units });
          }
        }
      }
    }
    for (let i = 0; i < 500; i++) {
      const n = 1 + Math.floor(random() * 3);
      const draw = () => cell(random() * 10 ** Math.floor(random() * 30 - 10), Math.floor(random() * 5000), STABILITY[Math.floor(random() * 3)]!);
      results.push({ base: draw(), targets: Array.from({ length: n }, draw), weight: null, units: [1, 100, 1000][i % 3]! });
    }
    for (const result of results) expect(serviceResponseJson(result)).toBe(JSON.stringify(toServiceResponse(result)));
  });
});
