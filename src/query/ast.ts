/**
 * Expression trees, in the JSON tree form of ../shared/datasets/README.md plus `code`
 * for codebook codes. Values are kept as written; binding to a dataset (resolve.ts)
 * checks them. `at` is the 0-based offset of the term in the source text.
 */
export type Expr =
  | { all: true }
  | { var: string; in: string[]; at?: number }
  | { var: string; min?: string; max?: string; at?: number }
  | { var: string; missing: true; at?: number }
  /** `VAR=all(v1,v2)`: every one of the values (multi-response variables). */
  | { var: string; every: string[]; at?: number }
  /** `VAR=none(v1,v2)`: an answer, but none of the values. */
  | { var: string; none: string[]; at?: number }
  | { and: Expr[] }
  | { or: Expr[] }
  | { not: Expr }
  | { code: string; at?: number }
  /** `@name`: a saved audience, expanded by the service that stores it (expandAudiences) before binding. */
  | { audience: string; at?: number };
