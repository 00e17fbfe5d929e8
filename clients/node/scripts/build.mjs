#!/usr/bin/env node
// Builds the package's code into dist/src: ES modules, declarations, and source maps that carry
// their sources inline (the package ships no .ts files). `npm run build` runs it, and so does
// npm's `prepare`, which npm runs on `npm install /path/to/clients/node`, on an install from git,
// and before `npm pack` / `npm publish`, so a package is never made without its code.
//
// npm installs a folder dependency without its devDependencies; when TypeScript is missing, the
// pinned build tools are installed first from the lockfile (`npm ci`, into this folder only).
// All output goes to stderr: `npm pack --json` keeps a clean stdout.
import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const TO_STDERR = { cwd: ROOT, stdio: ["ignore", 2, 2] };

if (!existsSync(TSC)) {
  process.stderr.write("@promptd/client: TypeScript is not installed here; installing the pinned build tools (npm ci) to compile dist/src\n");
  const npmCli = process.env.npm_execpath;
  if (npmCli && /\.[cm]?js$/.test(npmCli)) {
    execFileSync(process.execPath, [npmCli, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], TO_STDERR);
  } else {
    execFileSync(process.platform === "win32" ? "npm.cmd" : "npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], { ...TO_STDERR, shell: process.platform === "win32" });
  }
}
rmSync(join(ROOT, "dist", "src"), { recursive: true, force: true });
execFileSync(process.execPath, [TSC, "-p", "tsconfig.build.json"], TO_STDERR);
