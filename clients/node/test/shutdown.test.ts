/** The ordered shutdown, step by step, against stand-in sidecars that give in at a chosen step. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";

import { SidecarProcess, type ShutdownStep } from "../src/index.js";
import { CLIENT_ROOT, delay } from "./support/env.js";

const FIXTURE = join(CLIENT_ROOT, "test", "fixtures", "stubborn-sidecar.mjs");
// Short steps keep the suite fast; each stand-in answers within a few milliseconds.
const QUICK = { shutdownTimeoutMs: 1_000, graceMs: 300, termGraceMs: 300 };

async function stubborn(mode: string): Promise<{ sidecar: SidecarProcess; seen: string[] }> {
  const seen: string[] = [];
  const sidecar = await SidecarProcess.spawn({ command: process.execPath, args: [FIXTURE, mode], stderr: (line) => seen.push(line) });
  // Wait until it listens, so a signal never arrives before its handler is installed.
  for (let i = 0; i < 200 && !seen.includes("ready"); i++) {
    await delay(10);
  }
  return { sidecar, seen };
}

const CASES: Array<{ mode: string; step: ShutdownStep; seen: string[]; signal: NodeJS.Signals | null }> = [
  { mode: "exit", step: "exit", seen: ["ready", "got shutdown", "got exit"], signal: null },
  { mode: "stdin", step: "stdin", seen: ["ready", "got shutdown", "got exit", "stdin closed"], signal: null },
  { mode: "sigterm", step: "sigterm", seen: ["ready", "got shutdown", "got exit", "stdin closed", "sigterm"], signal: null },
  { mode: "sigkill", step: "sigkill", seen: ["ready", "got shutdown", "got exit", "stdin closed", "sigterm"], signal: "SIGKILL" },
];

for (const { mode, step, seen: expected, signal } of CASES) {
  test(`a sidecar that gives in only at "${step}" is ended there, after every gentler step in order`, async () => {
    const { sidecar, seen } = await stubborn(mode);
    const outcome = await sidecar.shutdown(QUICK);
    await delay(20); // the last stderr lines may trail the exit event
    assert.equal(outcome.step, step);
    assert.equal(outcome.signal, signal);
    assert.deepEqual(seen, expected);
  });
}

test("a shutdown request that is never answered times out, and the next steps still run", async () => {
  const { sidecar, seen } = await stubborn("deaf");
  const started = Date.now();
  const outcome = await sidecar.shutdown({ ...QUICK, shutdownTimeoutMs: 200 });
  assert.equal(outcome.step, "stdin");
  assert.equal(outcome.code, 0);
  assert.ok(Date.now() - started < 5_000);
  await delay(20);
  assert.deepEqual(seen.slice(0, 4), ["ready", "got shutdown", "got $/cancelRequest", "got exit"]);
});

test("shutdown of a process that already exited reports it without signalling anything", async () => {
  const { sidecar } = await stubborn("exit");
  sidecar.child.kill("SIGKILL");
  await sidecar.exited;
  const outcome = await sidecar.shutdown(QUICK);
  assert.deepEqual(outcome, { code: null, signal: "SIGKILL", step: "already" });
});
