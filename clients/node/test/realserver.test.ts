/**
 * Timeouts, cancellation, out-of-order replies, draining and server-to-client requests over the
 * real stdio transport, with the test-only methods (test/sleep, test/ask_client) the Python suite
 * uses. Skipped, with the reason, when that server cannot be found.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ConnectionClosedError,
  DEFAULT_REQUEST_TIMEOUT_MS,
  ErrorCodes,
  PromptdClient,
  RequestTimeoutError,
  ResponseError,
  type Id,
  type StartOptions,
} from "../src/index.js";
import { serverEnv, testServer } from "./support/env.js";

const SERVER = testServer();
const skip = "missing" in SERVER ? `test-method server unavailable: ${SERVER.missing}` : false;

async function start(options: StartOptions = {}): Promise<PromptdClient> {
  if ("missing" in SERVER) {
    throw new Error(SERVER.missing);
  }
  return PromptdClient.start({ command: SERVER.command, args: SERVER.args, env: serverEnv(), ...options });
}

function lateReplies(client: PromptdClient): Map<Id | null, ResponseError | undefined> {
  const late = new Map<Id | null, ResponseError | undefined>();
  client.connection.onUnmatchedResponse((response) => late.set(response.id, response.error));
  return late;
}

async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) {
      throw new Error("condition not met in time");
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test("replies come back out of order and each settles its own request", { skip }, async () => {
  const client = await start();
  try {
    const order: string[] = [];
    const slow = client.request("test/sleep", { ms: 400, tag: "slow" }).then((r) => order.push((r as { tag: string }).tag));
    const fast = client.request("test/sleep", { ms: 10, tag: "fast" }).then((r) => order.push((r as { tag: string }).tag));
    await Promise.all([slow, fast]);
    assert.deepEqual(order, ["fast", "slow"]);
  } finally {
    await client.stop();
  }
});

test("a timeout cancels the request on the server, which answers it -32800 after we stopped waiting", { skip }, async () => {
  const client = await start();
  try {
    const late = lateReplies(client);
    const started = Date.now();
    await assert.rejects(client.request("test/sleep", { ms: 30_000 }, { timeoutMs: 100 }), RequestTimeoutError);
    assert.ok(Date.now() - started < 5_000);
    await until(() => late.size === 1);
    const [error] = [...late.values()];
    assert.equal(error?.code, ErrorCodes.RequestCancelled);
    assert.equal(error?.kind, "cancelled");
    assert.deepEqual(await client.request("test/sleep", { ms: 1, tag: "after" }), { tag: "after" });
  } finally {
    await client.stop();
  }
});

test("aborting a signal cancels the running request on the server", { skip }, async () => {
  const client = await start();
  try {
    const late = lateReplies(client);
    const controller = new AbortController();
    const call = client.request("test/sleep", { ms: 30_000 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(call, { name: "AbortError" });
    await until(() => late.size === 1);
    assert.equal([...late.values()][0]?.code, ErrorCodes.RequestCancelled);
  } finally {
    await client.stop();
  }
});

test("a request in flight when the server dies fails with ConnectionClosedError", { skip }, async () => {
  const client = await start();
  const call = client.request("test/sleep", { ms: 30_000 });
  await new Promise((resolve) => setTimeout(resolve, 100));
  client.process?.child.kill("SIGKILL");
  await assert.rejects(call, ConnectionClosedError);
  await client.stop();
});

test("the ordered shutdown lets in-flight requests finish before the server exits", { skip }, async () => {
  const client = await start();
  const call = client.request("test/sleep", { ms: 300, tag: "drained" });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const outcome = await client.stop();
  assert.deepEqual(await call, { tag: "drained" });
  assert.deepEqual(outcome, { code: 0, signal: null, step: "exit" });
});

test("the server's own requests to the client are answered by the handler for that method", { skip }, async () => {
  const client = await start();
  try {
    client.connection.onRequest("test/question", (params, context) => {
      assert.match(String(context.id), /^promptd-/);
      return { answered: params };
    });
    assert.deepEqual(await client.request("test/ask_client", { timeout_ms: 5_000 }), { answer: { answered: { q: 1 } }, failure: null });
  } finally {
    await client.stop();
  }
});

test("a server request the client cannot serve is answered with an error the server sees", { skip }, async () => {
  const client = await start();
  try {
    const result = (await client.request("test/ask_client", { timeout_ms: 5_000 })) as { failure: string | null };
    assert.equal(result.failure, "ClientError");
  } finally {
    await client.stop();
  }
});

test("every request has a default timeout (30 s unless requestTimeoutMs says otherwise), and a call's timeoutMs overrides it", { skip }, async () => {
  assert.equal(DEFAULT_REQUEST_TIMEOUT_MS, 30_000);
  const client = await start({ requestTimeoutMs: 150 });
  try {
    const started = Date.now();
    await assert.rejects(client.request("test/sleep", { ms: 30_000 }), (error: unknown) => error instanceof RequestTimeoutError && error.timeoutMs === 150);
    assert.ok(Date.now() - started < 5_000);
    assert.deepEqual(await client.request("test/sleep", { ms: 400, tag: "longer" }, { timeoutMs: 5_000 }), { tag: "longer" });
    assert.deepEqual(await client.request("test/sleep", { ms: 400, tag: "unbounded" }, { timeoutMs: 0 }), { tag: "unbounded" });
  } finally {
    await client.stop();
  }
});
