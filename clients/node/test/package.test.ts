/**
 * The package as a user gets it: its metadata, `npm pack` from a checkout that was never built,
 * the tarball installed into a fresh project, and `npm install /path/to/clients/node`. The copies
 * borrow this checkout's node_modules (TypeScript) so that nothing is downloaded.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import { CLIENT_ROOT, PROMPTD, serverEnv } from "./support/env.js";

interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  type?: string;
  keywords?: string[];
  repository?: { type: string; url: string; directory?: string };
  files?: string[];
  scripts?: Record<string, string>;
  exports?: Record<string, unknown>;
}

const PACKAGE = JSON.parse(readFileSync(join(CLIENT_ROOT, "package.json"), "utf8")) as PackageJson;
const SCRATCH = mkdtempSync(join(tmpdir(), "promptd-node-package-"));
after(() => rmSync(SCRATCH, { recursive: true, force: true }));

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`${command} ${args.join(" ")} failed in ${cwd}: ${error.message}\n${stdout}\n${stderr}`));
      } else {
        resolve({ stdout, stderr });
      }
    });
  });
}

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const NPM_QUIET = ["--no-audit", "--no-fund", "--offline", "--loglevel=error"];

/** This package's sources as a fresh checkout has them: no dist/, TypeScript borrowed. */
function pristineCopy(name: string): string {
  const copy = join(SCRATCH, name);
  mkdirSync(copy);
  for (const entry of ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json", "LICENSE", "README.md", "src", "scripts"]) {
    cpSync(join(CLIENT_ROOT, entry), join(copy, entry), { recursive: true });
  }
  symlinkSync(join(CLIENT_ROOT, "node_modules"), join(copy, "node_modules"), "dir");
  return copy;
}

/** A fresh project with `spec` installed, running a host script that uses the client. */
async function useFromProject(name: string, spec: string): Promise<void> {
  const project = join(SCRATCH, name);
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name, version: "1.0.0", private: true }));
  await run(NPM, ["install", ...NPM_QUIET, spec], project);
  writeFileSync(
    join(project, "host.mjs"),
    `import { PromptdClient } from "@promptd/client";
const client = await PromptdClient.start({ command: process.env.PROMPTD });
const { text } = await client.reminderWrap({ key: "session.cwd", body: "/tmp" });
await client.stop();
console.log(text);
`,
  );
  // CommonJS hosts load the ES module with a dynamic import (every Node 20+), or with require()
  // where Node can require an ES module (20.19+ and 22.12+ without a flag: require_module).
  writeFileSync(
    join(project, "host-require.cjs"),
    `const { PromptdClient } = require("@promptd/client");
PromptdClient.start({ command: process.env.PROMPTD }).then(async (client) => {
  console.log(client.initializeResult.server_info.name);
  await client.stop();
});
`,
  );
  writeFileSync(
    join(project, "host.cjs"),
    `(async () => {
  const { PromptdClient } = await import("@promptd/client");
  const client = await PromptdClient.start({ command: process.env.PROMPTD });
  console.log(client.initializeResult.server_info.name);
  await client.stop();
})();
`,
  );
  const env = serverEnv({ PROMPTD });
  const esm = await run(process.execPath, ["host.mjs"], project, env);
  assert.equal(esm.stdout, '<system-reminder key="session.cwd">\n/tmp\n</system-reminder>\n');
  const cjs = await run(process.execPath, ["host.cjs"], project, env);
  assert.equal(cjs.stdout, "promptd\n");
  if (process.features.require_module === true) {
    const required = await run(process.execPath, ["host-require.cjs"], project, env);
    assert.equal(required.stdout, "promptd\n");
    assert.doesNotMatch(required.stderr, /ExperimentalWarning|ERR_REQUIRE_ESM/);
  }
}

test("package.json is publishable: not private, Apache-2.0, repository, keywords, ESM, built on prepare", () => {
  assert.equal(PACKAGE.private, undefined);
  assert.equal(PACKAGE.license, "Apache-2.0");
  assert.equal(PACKAGE.repository?.directory, "clients/node");
  assert.match(PACKAGE.repository?.url ?? "", /^git\+https:\/\/github\.com\//);
  assert.ok((PACKAGE.keywords ?? []).includes("promptd"));
  assert.equal(PACKAGE.type, "module");
  assert.match(PACKAGE.scripts?.["prepare"] ?? "", /build/);
  assert.deepEqual(PACKAGE.files, ["dist/src"]);
  assert.ok(readFileSync(join(CLIENT_ROOT, "LICENSE"), "utf8").includes("Apache License"));
});

test("npm pack from a checkout that was never built makes a tarball with the code, whose source maps carry their sources", async () => {
  const copy = pristineCopy("pack");
  const { stdout } = await run(NPM, ["pack", "--json", "--offline", "--loglevel=error", "--pack-destination", SCRATCH], copy);
  const [report] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  assert.ok(report !== undefined);
  const files = report.files.map((file) => file.path).sort();
  for (const expected of ["LICENSE", "README.md", "package.json", "dist/src/index.js", "dist/src/index.d.ts", "dist/src/client.js", "dist/src/client.js.map"]) {
    assert.ok(files.includes(expected), `${expected} missing from ${files.join(", ")}`);
  }
  assert.equal(files.some((file) => file.startsWith("dist/test") || file.endsWith(".ts") && !file.endsWith(".d.ts")), false, files.join(", "));
  // Every map a shipped file points at is shipped, and carries the sources it names.
  const unpacked = join(SCRATCH, "unpacked");
  mkdirSync(unpacked);
  await run("tar", ["-xzf", join(SCRATCH, report.filename), "-C", unpacked], SCRATCH);
  const dist = join(unpacked, "package", "dist", "src");
  for (const file of readdirSync(dist).filter((name) => name.endsWith(".js"))) {
    const reference = /\/\/# sourceMappingURL=(.+)$/m.exec(readFileSync(join(dist, file), "utf8"))?.[1];
    assert.equal(reference, `${file}.map`);
    const map = JSON.parse(readFileSync(join(dist, reference), "utf8")) as { sources: string[]; sourcesContent?: Array<string | null> };
    assert.equal(map.sourcesContent?.length, map.sources.length, `${reference} names sources it does not carry`);
    assert.ok(map.sourcesContent?.every((content) => typeof content === "string" && content.length > 0));
  }
  await useFromProject("from-tarball", join(SCRATCH, report.filename));
});

test("npm install /path/to/clients/node builds the package (prepare) and a host can import it", async () => {
  const copy = pristineCopy("folder");
  await useFromProject("from-folder", copy);
  assert.ok(readdirSync(join(copy, "dist", "src")).includes("index.js"));
  await typeScriptCommonJsHost(join(SCRATCH, "from-folder"));
});

/**
 * A CommonJS TypeScript host with a static import (tsc turns it into require()): type-checks
 * with module nodenext (TypeScript 5.8+) and with module commonjs, and runs where Node can
 * require an ES module. (module node16 refuses it, TS1479: use nodenext or a dynamic import.)
 */
async function typeScriptCommonJsHost(project: string): Promise<void> {
  symlinkSync(join(CLIENT_ROOT, "node_modules", "@types"), join(project, "node_modules", "@types"), "dir");
  writeFileSync(
    join(project, "host.cts"),
    `import { ErrorCodes, PromptdClient, type ResponseErrorCode } from "@promptd/client";
async function main(): Promise<void> {
  const client = await PromptdClient.start({ command: process.env["PROMPTD"] ?? "promptd" });
  const code: ResponseErrorCode = ErrorCodes.InvalidParams;
  console.log(client.initializeResult?.server_info.name, code);
  await client.stop();
}
void main();
`,
  );
  const tsc = join(CLIENT_ROOT, "node_modules", "typescript", "bin", "tsc");
  for (const [module, resolution] of [["nodenext", "nodenext"], ["commonjs", "node10"]] as const) {
    const out = join(project, `out-${module}`);
    await run(process.execPath, [tsc, "--strict", "--module", module, "--moduleResolution", resolution, "--target", "es2022", "--types", "node", "--outDir", out, "host.cts"], project);
    if (process.features.require_module === true) {
      const host = await run(process.execPath, [join(out, "host.cjs")], project, serverEnv({ PROMPTD }));
      assert.equal(host.stdout, "promptd -32602\n");
    }
  }
}
