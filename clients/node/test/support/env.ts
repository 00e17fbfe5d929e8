/**
 * Where the tests find things: the sidecar executable (PROMPTD, default `promptd` on PATH), the
 * repository's shared vectors, and the real transport with test-only methods when it exists.
 */

import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { PromptdClient, type StartOptions } from "../../src/index.js";

// Compiled to clients/node/dist/test/support/env.js: five levels up is the repository root.
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../..");
export const CLIENT_ROOT = join(REPO_ROOT, "clients", "node");
export const VECTORS = join(REPO_ROOT, "protocol", "vectors");
export const PROMPTD = process.env["PROMPTD"] ?? "promptd";

/** Environment for spawned servers: quiet logs, so a failing test shows only what matters. */
export function serverEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, PROMPTD_LOG_LEVEL: "warning", ...extra };
}

/** A client on a fresh real sidecar, its stderr kept for assertions. */
export async function startClient(options: StartOptions = {}): Promise<{ client: PromptdClient; stderr: string[] }> {
  const stderr: string[] = [];
  const client = await PromptdClient.start({
    command: PROMPTD,
    env: serverEnv(),
    onStderr: (line) => stderr.push(line),
    ...options,
  });
  return { client, stderr };
}

/**
 * The real stdio transport with test-only methods (test/sleep, test/ask_client...), run by the
 * Python next to PROMPTD. Undefined (with the reason) when it cannot be found.
 */
export function testServer(): { command: string; args: string[] } | { missing: string } {
  const script = join(REPO_ROOT, "tests", "support", "serve_with_test_methods.py");
  if (!existsSync(script)) {
    return { missing: `${script} does not exist` };
  }
  const python = process.env["PROMPTD_PYTHON"] ?? (isAbsolute(PROMPTD) ? join(dirname(PROMPTD), "python") : undefined);
  if (python === undefined || !existsSync(python)) {
    return { missing: "no Python next to PROMPTD (set PROMPTD to an absolute path inside a venv, or PROMPTD_PYTHON)" };
  }
  return { command: python, args: [script] };
}

/** Resolves after `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
