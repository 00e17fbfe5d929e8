/** The ordered shutdown, step by step, against stand-in sidecars that give in at a chosen step. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";

import { DEFAULT_GRACE_MS, type ShutdownStep } from "../src/index.js";
import { SidecarProcess } from "../src/process.js";
import { CLIENT_ROOT, delay } from "./support/env.js";

const FIXTURE = join(CLIENT_ROOT, "test", "fixtures", "stubborn-sidecar.mjs");
// Short steps keep the suite fast; each stand-in answers within a few milliseconds.
const QUICK = { graceMs: 300 };

async function stubborn(mode: string, graceMs?: number): Promise<{ sidecar: SidecarProcess; seen: string[] }> {
  const seen: string[] = [];
  const options = { command: process.execPath, args: [FIXTURE, mode], onStderr: (line: string) => seen.push(line) };
  const sidecar = await SidecarProcess.spawn(graceMs === undefined ? options : { ...options, graceMs });
  // Wait until it listens, so a signal never arrives before its handler is installed.
  for (let i = 0; i < 200 && !seen.includes("ready"); i++) {
    await delay(10);
  }
  return { sidecar, seen };
}

const CASES: Array<{ mode: string; step: ShutdownStep; seen: string[]; signal: NodeJS.Signals | null }> = [
  { mode: "exit", step: "exit", seen: ["ready", "got shutdown", "got exit"], signal: null },
  // `exit` and the end of stdin come together: one step, one wait.
  { mode: "stdin", step: "exit", seen: ["ready", "got shutdown", "got exit", "stdin closed"], signal: null },
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
  const outcome = await sidecar.shutdown({ graceMs: 200 });
  assert.equal(outcome.step, "exit");
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

test("one grace per step, 5 s by default, settable at spawn: a SIGKILL-only sidecar ends after three waits", async () => {
  assert.equal(DEFAULT_GRACE_MS, 5_000);
  const { sidecar, seen } = await stubborn("sigkill", 150);
  const started = Date.now();
  const outcome = await sidecar.shutdown();
  const took = Date.now() - started;
  assert.equal(outcome.step, "sigkill");
  assert.ok(took >= 300 && took < 3_000, `took ${took} ms`);
  await delay(20);
  assert.deepEqual(seen, ["ready", "got shutdown", "got exit", "stdin closed", "sigterm"]);
});

test("the sidecar's stderr is kept as a bounded tail, whatever it writes", async () => {
  const script = "for (let i = 0; i < 500; i++) process.stderr.write(`line ${i} ${'x'.repeat(100)}\\n`)";
  const sidecar = await SidecarProcess.spawn({ command: process.execPath, args: ["-e", script], stderrLines: 20, stderrBytes: 1_000 });
  await sidecar.exited;
  const { stderr } = await sidecar.report();
  assert.ok(stderr.length > 0 && stderr.length <= 20, String(stderr.length));
  assert.ok(Buffer.byteLength(stderr.join("")) <= 1_000);
  assert.match(stderr.at(-1) ?? "", /^line 499 /);
});
