// A new embedded database folder without running PGlite's initdb in it. initdb costs ~8-10 s
// of CPU on the test machine (a second Postgres instance in WebAssembly, about a gigabyte of
// fresh memory touched) and gives the same cluster every time, so one run makes it once (the
// same call `src/access/pglite-worker.js` makes on an empty folder) and each folder that asks
// gets a copy of that closed cluster. The product still creates its schema in the copy when it
// opens it, as it does after its own initdb; the files that check creating a database from an
// empty folder (the admin commands, the embedded lock, the development account) do not use this.
import { cpSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sharedBuild } from './shared-builds.js';

async function initdb(out: string): Promise<void> {
  const db = await PGlite.create(out);
  await db.close();
}

/** Fills `folder` (which must not exist yet) with a new, empty PGlite cluster and returns it, for openDatabase(folder). */
export async function newEmbeddedFolder(folder: string): Promise<string> {
  const template = await sharedBuild('pglite-initdb', 'PGlite.create() of an empty folder', initdb, '');
  mkdirSync(dirname(folder), { recursive: true });
  cpSync(template, folder, { recursive: true, errorOnExist: true, force: false });
  return folder;
}
