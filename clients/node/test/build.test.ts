/**
 * scripts/build.mjs, as `npm install` in a host runs it (npm's `prepare`): a host linked to the
 * folder keeps a complete dist/src the whole time. Run on a copy of this package (its
 * node_modules borrowed), so the build under test is not the one the suite itself runs from.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import { CLIENT_ROOT } from "./support/env.js";

const SCRATCH = mkdtempSync(join(tmpdir(), "promptd-node-build-"));
after(() => rmSync(SCRATCH, { recursive: true, force: true }));

/** Runs the build in `dir`; resolves with its stderr. */
function build(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(dir, "scripts", "build.mjs")], { cwd: dir }, (error, _stdout, stderr) => {
      if (error) {
        reject(new Error(`build.mjs failed: ${error.message}\n${stderr}`));
      } else {
        resolve(stderr);
      }
    });
  });
}

test("a rebuild never leaves dist/src missing or partial, removes what the sources no longer have, and an unchanged one writes nothing", async () => {
  const copy = join(SCRATCH, "package");
  for (const entry of ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json", "src", "scripts"]) {
    cpSync(join(CLIENT_ROOT, entry), join(copy, entry), { recursive: true });
  }
  symlinkSync(join(CLIENT_ROOT, "node_modules"), join(copy, "node_modules"), "dir");
  const dist = join(copy, "dist", "src");
  const watched = ["index.js", "index.d.ts", "client.js", "generated.d.ts"].map((file) => join(dist, file));

  writeFileSync(join(copy, "src", "obsolete.ts"), "export const OBSOLETE = 1;\n");
  await build(copy);
  assert.ok(existsSync(join(dist, "obsolete.js")));
  const built = statSync(join(dist, "index.js"));

  // Nothing changed (a host's second `npm install`): nothing is compiled or rewritten.
  const again = await build(copy);
  assert.match(again, /already built from these sources; nothing to do/);
  const untouched = statSync(join(dist, "index.js"));
  assert.equal(untouched.ino, built.ino);
  assert.equal(untouched.mtimeMs, built.mtimeMs);

  // The sources change: while tsc runs, a linked host (or `tsc --watch`) keeps finding every
  // file, whole, checked on every turn of the event loop for the whole build.
  rmSync(join(copy, "src", "obsolete.ts"));
  appendFileSync(join(copy, "src", "index.ts"), "\nexport const REBUILT = true;\n");
  let building = true;
  let checks = 0;
  const missing: string[] = [];
  const watch = (async () => {
    while (building) {
      for (const file of watched) {
        if (!existsSync(file) || statSync(file).size === 0) {
          missing.push(file);
        }
      }
      checks += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  try {
    await build(copy);
  } finally {
    building = false;
    await watch;
  }
  assert.deepEqual(missing, [], "dist/src had missing or empty files during the rebuild");
  assert.ok(checks > 10, `only ${checks} checks during the build`);
  assert.match(readFileSync(join(dist, "index.js"), "utf8"), /REBUILT/);
  assert.equal(existsSync(join(dist, "obsolete.js")), false, "a file of a removed source is left behind");
  assert.equal(existsSync(join(dist, "obsolete.d.ts")), false);
  // No staging folder is left behind in dist/.
  assert.deepEqual(readdirSync(join(copy, "dist")).sort(), [".build-stamp.json", "src"]);
});
