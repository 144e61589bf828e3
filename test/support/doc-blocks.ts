// The code blocks of README.md and docs/*.md, with the markers that say how each is run
// (test/docs-blocks.test.ts runs them). A marker is an HTML comment on the line(s) right
// above a block's fence, visible in the markdown source:
//
//   <!-- fragment: WHY -->   not run: WHY says what it needs that a block cannot start itself
//   <!-- file: NAME -->      not run: the page's folder holds it as file NAME before any block runs
//   <!-- serves: PORT -->    runs in the background until the page ends (or the next block
//                            serving PORT starts); the blocks below call it. PORT is replaced by
//                            a free port throughout the page
//   <!-- name: NAME -->      a ts block that is not run alone: blocks marked `after: NAME` start with it
//   <!-- after: NAME -->     a ts block run as a program of its own, after block NAME's code
//
// Every other sh block runs in the page's one shell (as a reader pastes them into one
// terminal: variables carry over), and every other ts block is part of the page's one
// program (as a reader pastes them into one file), run where its last block stands.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DocBlock {
  /** `README.md` or `docs/NAME.md`. */
  page: string;
  /** Line of the opening fence, 1-based. */
  line: number;
  lang: string;
  code: string;
  markers: Record<string, string>;
}

const MARKER = /^<!--\s*(fragment|file|serves|name|after):\s*(.*?)\s*-->\s*$/;

export function docPages(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** Every fenced block of a page, with the markers on the lines right above its fence. */
export function docBlocks(root: string, page: string): DocBlock[] {
  const lines = readFileSync(join(root, page), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.findIndex((line, j) => j > i && /^```\s*$/.test(line));
    if (end < 0) throw new Error(`${page}:${i + 1}: a code block that is never closed`);
    const markers: Record<string, string> = {};
    for (let j = i - 1; j >= 0; j--) {
      const marker = MARKER.exec(lines[j]!);
      if (!marker) break;
      markers[marker[1]!] = marker[2]!;
    }
    blocks.push({ page, line: i + 1, lang: fence[1] ?? '', code: `${lines.slice(i + 1, end).join('\n')}\n`, markers });
    i = end;
  }
  return blocks;
}

/** The blocks the runner takes: sh and ts blocks, and any block written as a file. */
export function runnableBlocks(root: string): DocBlock[] {
  return docPages(root).flatMap((page) => docBlocks(root, page).filter((block) => block.lang === 'sh' || block.lang === 'ts' || 'file' in block.markers));
}
