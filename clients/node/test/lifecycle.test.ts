/** The client against a real `promptd serve`: lifecycle, errors, concurrency, closed connections. */

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ConnectionClosedError,
  ConnectionError,
  ErrorCodes,
  PROTOCOL_VERSION,
  PromptdClient,
  ResponseError,
  SidecarProcess,
} from "../src/index.js";
import { PROMPTD, serverEnv, startClient } from "./support/env.js";

test("start initializes: the server names itself, speaks our protocol version and lists its methods", async () => {
  const { client } = await startClient({ clientInfo: { name: "node-tests", version: "1" } });
  try {
    const info = client.initializeResult;
    assert.ok(info !== undefined);
    assert.equal(info.server_info.name, "promptd");
    assert.equal(info.protocol_version, PROTOCOL_VERSION);
    for (const method of ["initialize", "shutdown", "reminder/wrap", "rpc.discover"]) {
      assert.ok(client.serverMethods.includes(method), `${method} missing from initialize`);
    }
  } finally {
    await client.stop();
  }
});

test("a protocol version the server does not speak is answered with its own, and the client may go on", async () => {
  const { client } = await startClient({ protocolVersion: "1999-01-01" });
  try {
    assert.equal(client.initializeResult?.protocol_version, PROTOCOL_VERSION);
    const wrapped = await client.reminderWrap({ key: "k", body: "b" });
    assert.equal(wrapped.text, '<system-reminder key="k">\nb\n</system-reminder>');
  } finally {
    await client.stop();
  }
});

test("initialize is optional: a one-shot pipeline may call methods directly", async () => {
  const { client } = await startClient({ initialize: false });
  try {
    assert.equal(client.initializeResult, undefined);
    const keys = await client.reminderKeys();
    assert.ok(keys.keys.some((entry) => entry.key === "session.cwd"));
  } finally {
    await client.stop();
  }
});

test("a second initialize is refused with already_initialized", async () => {
  const { client } = await startClient();
  try {
    await assert.rejects(client.initialize({}), (error: unknown) => error instanceof ResponseError && error.kind === "already_initialized");
  } finally {
    await client.stop();
  }
});

test("errors arrive as ResponseError with code, message and data.kind, never as connection errors", async () => {
  const { client } = await startClient();
  try {
    const invalid = await client.reminderWrap({ key: "k" } as { key: string; body: string }).catch((error: unknown) => error);
    assert.ok(invalid instanceof ResponseError && !(invalid instanceof ConnectionError));
    assert.equal(invalid.code, ErrorCodes.InvalidParams);
    assert.equal(invalid.kind, "invalid_params");
    assert.ok(typeof invalid.message === "string" && invalid.message.length > 0);
    const missing = await client.request("no/such_method", {}).catch((error: unknown) => error);
    assert.ok(missing instanceof ResponseError);
    assert.equal(missing.code, ErrorCodes.MethodNotFound);
    assert.equal(missing.kind, "method_not_found");
    const nested = await client.reminderWrap({ key: "k", body: "</system-reminder>" }).catch((error: unknown) => error);
    assert.ok(nested instanceof ResponseError);
    assert.equal(nested.code, -32011);
    assert.equal(nested.kind, "nested_marker");
    // The connection is unharmed by any of it.
    assert.equal((await client.reminderWrap({ key: "k", body: "" })).text, '<system-reminder key="k">\n\n</system-reminder>');
  } finally {
    await client.stop();
  }
});

test("hundreds of concurrent requests each get their own answer", async () => {
  const { client } = await startClient();
  try {
    const bodies = Array.from({ length: 300 }, (_, i) => `body ${i} ${"&".repeat(i % 7)}`);
    const results = await Promise.all(bodies.map((body, i) => client.reminderWrap({ key: `k${i}`, body })));
    results.forEach((result, i) => {
      const body = (bodies[i] ?? "").replace(/&/g, "&amp;");
      assert.equal(result.text, `<system-reminder key="k${i}">\n${body}\n</system-reminder>`);
    });
  } finally {
    await client.stop();
  }
});

test("rpc.discover returns the OpenRPC document the types were generated from", async () => {
  const { client } = await startClient();
  try {
    const doc = await client.rpcDiscover();
    assert.match(doc.openrpc, /^1\./);
    assert.equal(doc["x-protocol-version"], PROTOCOL_VERSION);
  } finally {
    await client.stop();
  }
});

test("the ordered shutdown ends a healthy server at its first step, with exit code 0", async () => {
  const { client } = await startClient();
  const outcome = await client.stop();
  assert.deepEqual(outcome, { code: 0, signal: null, step: "exit" });
  assert.equal(client.connection.state, "closed");
  assert.deepEqual(await client.stop(), outcome, "stopping twice gives the same outcome");
});

test("after shutdown the server refuses requests with -32002, and exit then ends it with 0", async () => {
  const { client } = await startClient();
  await client.shutdown();
  await assert.rejects(client.reminderKeys(), (error: unknown) => error instanceof ResponseError && error.code === ErrorCodes.ServerShutDown);
  await client.notify("exit", {});
  const exit = await client.process?.exited;
  assert.deepEqual(exit, { code: 0, signal: null });
});

test("exit without shutdown ends the server with 1, as the lifecycle says", async () => {
  const { client } = await startClient();
  await client.notify("exit", {});
  assert.deepEqual(await client.process?.exited, { code: 1, signal: null });
});

test("closing the server's stdin ends it cleanly with 0", async () => {
  const sidecar = await SidecarProcess.spawn({ command: PROMPTD, env: serverEnv(), stderr: "ignore" });
  await sidecar.connection.end();
  assert.deepEqual(await sidecar.exited, { code: 0, signal: null });
});

test("when the server dies, requests fail with ConnectionClosedError, not a hang", async () => {
  const { client } = await startClient();
  client.process?.child.kill("SIGKILL");
  await client.process?.exited;
  await assert.rejects(client.reminderKeys(), ConnectionClosedError);
  assert.equal((await client.stop()).step, "already");
});

test("an executable that does not exist makes start reject, with no process left behind", async () => {
  await assert.rejects(PromptdClient.start({ command: "/nonexistent/promptd", stderr: "ignore" }), { code: "ENOENT" });
});

test("the server's stderr logs reach the host line by line, and stdout carries only frames", async () => {
  const { client, stderr } = await startClient({ env: serverEnv({ PROMPTD_LOG_LEVEL: "info" }) });
  await client.stop();
  assert.ok(stderr.length > 0);
  for (const line of stderr) {
    assert.equal(typeof (JSON.parse(line) as { event?: unknown }).event, "string");
  }
});
