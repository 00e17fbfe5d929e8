/**
 * The SDK message types type-check against the wrappers: `tsc --noEmit` over
 * test/typecheck/sdk-messages.ts, with the package's strict settings. `--skipLibCheck`: the `ai`
 * package's own declarations need the DOM library and @types/json-schema, which a Node host
 * checking them would have to add; what is checked here is our wrappers against its types.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";

import { CLIENT_ROOT } from "./support/env.js";

const TSC = join(CLIENT_ROOT, "node_modules", "typescript", "bin", "tsc");

test("historySanitize takes AI SDK UIMessage[] and ModelMessage[] without casts and gives them back", () => {
  const file = join(CLIENT_ROOT, "test", "typecheck", "sdk-messages.ts");
  const args = [TSC, "--noEmit", "--strict", "--exactOptionalPropertyTypes", "--noUncheckedIndexedAccess", "--skipLibCheck", "--module", "NodeNext"];
  const run = spawnSync(process.execPath, [...args, "--moduleResolution", "NodeNext", "--target", "ES2022", "--types", "node", file], {
    cwd: CLIENT_ROOT,
    encoding: "utf8",
  });
  assert.equal(run.status, 0, `tsc found errors:\n${run.stdout}${run.stderr}`);
});
