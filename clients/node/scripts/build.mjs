#!/usr/bin/env node
// Builds the package's code into dist/src: ES modules, declarations, and source maps that carry
// their sources inline (the package ships no .ts files). `npm run build` runs it, and so does
// npm's `prepare`, which npm runs on `npm install /path/to/clients/node`, on an install from git,
// and before `npm pack` / `npm publish`, so a package is never made without its code.
//
//   node scripts/build.mjs            dist/src (tsconfig.build.json)
//   node scripts/build.mjs --tests    dist/src and dist/test (tsconfig.json), for `make test`
//
// A host that links this folder (`npm install /path/to/clients/node`, npm link) may be running,
// or type-checking with `tsc --watch`, while the build runs, and every `npm install` in that host
// runs `prepare` again. So dist/src is never deleted and never half-written:
//
// - when dist/ was built from exactly the current inputs (sources, tsconfig, the lockfile's
//   TypeScript, this script; a hash in dist/.build-stamp.json), nothing is compiled or written;
// - otherwise tsc writes into a fresh folder inside dist/, and each file is then moved into place
//   with a rename (atomic: a reader sees the old file or the new one, never a missing or partial
//   one); files the new build no longer has are removed last.
//
// npm installs a folder dependency without its devDependencies; when TypeScript is missing, the
// pinned build tools are installed first from the lockfile (`npm ci`, into this folder only).
// All output goes to stderr: `npm pack --json` keeps a clean stdout.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");
const STAMP = join(DIST, ".build-stamp.json");
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const TO_STDERR = { cwd: ROOT, stdio: ["ignore", 2, 2] };

const withTests = process.argv.includes("--tests");
const config = withTests ? "tsconfig.json" : "tsconfig.build.json";
// The output folders this build owns, each compiled from the source folder of the same name.
const outputs = withTests ? ["src", "test"] : ["src"];

/** Every file under `dir`, as paths relative to it, sorted. */
function filesUnder(dir, base = dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path, base));
    else if (entry.isFile()) out.push(relative(base, path));
  }
  return out.sort();
}

/** A hash of everything one output folder is compiled from. */
function inputsHash(name) {
  const hash = createHash("sha256");
  const inputs = [
    ...filesUnder(join(ROOT, name)).map((file) => join(name, file)),
    "tsconfig.json",
    "tsconfig.build.json",
    "package-lock.json",
    join("scripts", "build.mjs"),
  ];
  for (const file of inputs) {
    const path = join(ROOT, file);
    hash.update(`${file}\0`);
    hash.update(existsSync(path) ? readFileSync(path) : "(none)");
    hash.update("\0");
  }
  return hash.digest("hex");
}

function readStamp() {
  try {
    const stamp = JSON.parse(readFileSync(STAMP, "utf8"));
    return typeof stamp === "object" && stamp !== null ? stamp : {};
  } catch {
    return {};
  }
}

const wanted = Object.fromEntries(outputs.map((name) => [name, inputsHash(name)]));
const stamp = readStamp();
const current = outputs.every((name) => stamp[name] === wanted[name] && existsSync(join(DIST, name)));
if (current && existsSync(join(DIST, "src", "index.js"))) {
  process.stderr.write(`@promptd/client: dist/${outputs.join(" and dist/")} already built from these sources; nothing to do\n`);
  process.exit(0);
}

if (!existsSync(TSC)) {
  process.stderr.write("@promptd/client: TypeScript is not installed here; installing the pinned build tools (npm ci) to compile dist/src\n");
  const npmCli = process.env.npm_execpath;
  if (npmCli && /\.[cm]?js$/.test(npmCli)) {
    execFileSync(process.execPath, [npmCli, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], TO_STDERR);
  } else {
    execFileSync(process.platform === "win32" ? "npm.cmd" : "npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], { ...TO_STDERR, shell: process.platform === "win32" });
  }
}

mkdirSync(DIST, { recursive: true });
// Inside dist/, so that every rename below stays on one file system.
const staging = mkdtempSync(join(DIST, ".build-"));
try {
  execFileSync(process.execPath, [TSC, "-p", config, "--outDir", staging], TO_STDERR);
  for (const name of outputs) {
    swapIn(join(staging, name), join(DIST, name));
  }
} finally {
  rmSync(staging, { recursive: true, force: true });
}
const written = { ...readStamp(), ...wanted };
const stampTmp = `${STAMP}.${process.pid}`;
writeFileSync(stampTmp, `${JSON.stringify(written, null, 2)}\n`);
renameSync(stampTmp, STAMP);

/**
 * Moves every file of `from` to the same place under `to`, each with one rename, then removes
 * what `to` has that `from` had not (files of sources that no longer exist), then empty folders.
 */
function swapIn(from, to) {
  const fresh = filesUnder(from);
  for (const file of fresh) {
    mkdirSync(dirname(join(to, file)), { recursive: true });
    renameSync(join(from, file), join(to, file));
  }
  const keep = new Set(fresh);
  for (const file of filesUnder(to)) {
    if (!keep.has(file)) unlinkSync(join(to, file));
  }
  removeEmptyFolders(to);
}

function removeEmptyFolders(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      const path = join(dir, entry.name);
      removeEmptyFolders(path);
      if (readdirSync(path).length === 0) rmdirSync(path);
    }
  }
}
