/**
 * The TypeScript on docs/sdk-*.md runs: a page's ```ts blocks, in order, as one module, written
 * into clients/node/.doc-examples/ (so that `@promptd/client` resolves to this package and `ai` to
 * its dev dependency), type-checked and compiled with the package's strict settings, then run
 * against the sidecar in $PROMPTD. A block after `<!-- no-run: why -->` is left out.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { CLIENT_ROOT, PROMPTD, REPO_ROOT, serverEnv } from "./support/env.js";

const DOCS = join(REPO_ROOT, "docs");
const OUT = join(CLIENT_ROOT, ".doc-examples");
const TSC = join(CLIENT_ROOT, "node_modules", "typescript", "bin", "tsc");

/** The runnable ```ts blocks of a Markdown page, in order. */
export function tsBlocks(markdown: string): string[] {
  const lines = markdown.split("\n");
  const blocks: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i] ?? "")) continue;
    let before = "";
    for (let j = i - 1; j >= 0 && before === ""; j--) before = (lines[j] ?? "").trim();
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] ?? "").startsWith("```"); i++) body.push(lines[i] ?? "");
    if (!before.startsWith("<!-- no-run")) blocks.push(body.join("\n"));
  }
  return blocks;
}

const PAGES = readdirSync(DOCS)
  .filter((name) => /^sdk-.*\.md$/.test(name))
  .filter((name) => tsBlocks(readFileSync(join(DOCS, name), "utf8")).length > 0)
  .sort();

test("the AI SDK page has TypeScript to run", () => {
  assert.ok(PAGES.includes("sdk-ai-sdk.md"), PAGES.join(", "));
  const sample = "```ts\nconst a = 1;\n```\n\n<!-- no-run: a sketch -->\n```ts\nthrow 1;\n```\n```typescript\nconst b = 2;\n```\n";
  assert.deepEqual(tsBlocks(sample), ["const a = 1;", "const b = 2;"]);
});

for (const page of PAGES) {
  test(`docs/${page}: its TypeScript type-checks and runs`, () => {
    const name = page.replace(/\.md$/, "");
    const folder = join(OUT, name);
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder, { recursive: true });
    const source = tsBlocks(readFileSync(join(DOCS, page), "utf8")).join("\n\n") + "\nexport {};\n";
    writeFileSync(join(folder, "example.ts"), source);
    const compiled = spawnSync(
      process.execPath,
      [TSC, "--strict", "--exactOptionalPropertyTypes", "--noUncheckedIndexedAccess", "--skipLibCheck", "--module", "NodeNext", "--moduleResolution", "NodeNext", "--target", "ES2022", "--types", "node", "--rootDir", folder, "--outDir", folder, join(folder, "example.ts")],
      { cwd: CLIENT_ROOT, encoding: "utf8" },
    );
    assert.equal(compiled.status, 0, `tsc:\n${compiled.stdout}${compiled.stderr}`);
    const ran = spawnSync(process.execPath, [join(folder, "example.js")], { cwd: folder, encoding: "utf8", env: serverEnv({ PROMPTD }) });
    assert.equal(ran.status, 0, `docs/${page} failed:\n${ran.stdout}${ran.stderr}`);
  });
}
