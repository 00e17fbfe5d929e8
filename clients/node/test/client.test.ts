import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ConnectionClosedError,
  HostProviderError,
  MessageTooLargeError,
  PRODUCE_METHOD,
  PromptdClient,
  ResponseError,
  type HostProvider,
  type ProduceRequest,
} from "../src/index.js";
import { FakePeer } from "./support/fake.js";

function clientOnFake(): { peer: FakePeer; client: PromptdClient } {
  const peer = new FakePeer();
  return { peer, client: new PromptdClient(peer.connect()) };
}

/** Registers `handler` as host provider `name`, the fake server accepting. */
async function register(peer: FakePeer, client: PromptdClient, name: string, handler: HostProvider): Promise<void> {
  const registered = client.registerHostProvider({ name, key: name }, handler);
  const request = await peer.nextCall("providers/register");
  peer.reply(request["id"], {});
  await registered;
}

function produce(peer: FakePeer, id: string, params: unknown): Promise<Record<string, unknown>> {
  peer.send({ jsonrpc: "2.0", id, method: PRODUCE_METHOD, params });
  return peer.next((frame) => frame["id"] === id);
}

test("provider/produce is routed to the host provider it names, and its text is returned", async () => {
  const { peer, client } = clientOnFake();
  const asked: ProduceRequest[] = [];
  await register(peer, client, "git.status", (request) => {
    asked.push(request);
    return { text: "2 files changed" };
  });
  await register(peer, client, "other", () => ({ text: "wrong one" }));
  const reply = await produce(peer, "promptd-1", { provider: "git.status", session: "s1", user_message: "hi" });
  assert.deepEqual(reply["result"], { text: "2 files changed" });
  assert.deepEqual(asked, [{ provider: "git.status", session: "s1", user_message: "hi" }]);
});

test("a host provider may answer null (nothing this turn) and may be async", async () => {
  const { peer, client } = clientOnFake();
  await register(peer, client, "quiet", async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { text: null };
  });
  const reply = await produce(peer, "promptd-2", { provider: "quiet", session: "s", user_message: "" });
  assert.deepEqual(reply["result"], { text: null });
});

test("produce for a provider this client does not have is answered unknown_provider", async () => {
  const { peer } = clientOnFake();
  const reply = await produce(peer, "promptd-3", { provider: "ghost", session: "s", user_message: "x" });
  const error = reply["error"] as { code: number; data: { kind: string; provider: string } };
  assert.equal(error.code, -32041);
  assert.deepEqual(error.data, { kind: "unknown_provider", provider: "ghost" });
});

test("produce with malformed params is answered invalid_params, and the handler is not called", async () => {
  const { peer, client } = clientOnFake();
  let called = false;
  await register(peer, client, "p", () => {
    called = true;
    return { text: "x" };
  });
  const reply = await produce(peer, "promptd-4", { provider: "p", session: 7, user_message: "x" });
  const error = reply["error"] as { code: number; data: { kind: string } };
  assert.equal(error.code, -32602);
  assert.equal(error.data.kind, "invalid_params");
  assert.equal(called, false);
});

test("a provider that returns the wrong shape is answered -32603 rather than sending junk", async () => {
  const { peer, client } = clientOnFake();
  client.connection.onError(() => undefined);
  await register(peer, client, "sloppy", () => ({ text: 5 }) as unknown as { text: string });
  const reply = await produce(peer, "promptd-5", { provider: "sloppy", session: "s", user_message: "x" });
  assert.equal((reply["error"] as { code: number }).code, -32603);
});

test("unregistering removes the local handler only once the server accepted", async () => {
  const { peer, client } = clientOnFake();
  await register(peer, client, "gone", () => ({ text: "x" }));
  const unregistered = client.unregisterHostProvider("gone");
  const request = await peer.nextCall("providers/unregister");
  assert.deepEqual(request["params"], { name: "gone" });
  // Still served while the server has not answered.
  assert.deepEqual((await produce(peer, "promptd-6a", { provider: "gone", session: "s", user_message: "x" }))["result"], { text: "x" });
  peer.reply(request["id"], {});
  await unregistered;
  const reply = await produce(peer, "promptd-6", { provider: "gone", session: "s", user_message: "x" });
  assert.equal((reply["error"] as { data: { kind: string } }).data.kind, "unknown_provider");
});

test("a refused unregistration keeps the local handler", async () => {
  const { peer, client } = clientOnFake();
  await register(peer, client, "kept", () => ({ text: "still here" }));
  const unregistered = client.unregisterHostProvider("kept");
  const request = await peer.nextCall("providers/unregister");
  peer.fail(request["id"], -32041, "no provider with this name", { kind: "unknown_provider" });
  await assert.rejects(unregistered, ResponseError);
  assert.deepEqual((await produce(peer, "promptd-6b", { provider: "kept", session: "s", user_message: "x" }))["result"], { text: "still here" });
});

test("registration is atomic: no handler before the server accepts, and a produce right behind the acceptance is served", async () => {
  const { peer, client } = clientOnFake();
  const registered = client.registerHostProvider({ name: "atomic", key: "k" }, () => ({ text: "served" }));
  const request = await peer.nextCall("providers/register");
  // Before the server answered, nothing is served: a produce for it waits for the answer.
  peer.send({ jsonrpc: "2.0", id: "promptd-9a", method: PRODUCE_METHOD, params: { provider: "atomic", session: "s", user_message: "x" } });
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(peer.received.some((frame) => frame["id"] === "promptd-9a"), false);
  // The acceptance and a produce in one read, as a server may write them.
  peer.sendRaw(
    JSON.stringify({ jsonrpc: "2.0", id: request["id"], result: {} }) +
      "\n" +
      JSON.stringify({ jsonrpc: "2.0", id: "promptd-9b", method: PRODUCE_METHOD, params: { provider: "atomic", session: "s", user_message: "x" } }) +
      "\n",
  );
  await registered;
  const reply = await peer.next((frame) => frame["id"] === "promptd-9b");
  assert.deepEqual(reply["result"], { text: "served" });
  assert.deepEqual((await peer.next((frame) => frame["id"] === "promptd-9a"))["result"], { text: "served" });
  // A refused registration: the waiting produce is answered unknown_provider.
  const refused = client.registerHostProvider({ name: "nope", key: "k" }, () => ({ text: "never" }));
  const refusedRequest = await peer.nextCall("providers/register");
  peer.send({ jsonrpc: "2.0", id: "promptd-9c", method: PRODUCE_METHOD, params: { provider: "nope", session: "s", user_message: "x" } });
  await new Promise((resolve) => setTimeout(resolve, 30));
  peer.fail(refusedRequest["id"], -32602, "Invalid params", { kind: "invalid_params" });
  await assert.rejects(refused, ResponseError);
  const unknown = await peer.next((frame) => frame["id"] === "promptd-9c");
  assert.equal((unknown["error"] as { data: { kind: string } }).data.kind, "unknown_provider");
});

test("a host provider that throws is answered with an error and the exception reaches the client's onError", async () => {
  const { peer, client } = clientOnFake();
  const errors: Error[] = [];
  client.onError((error) => errors.push(error));
  const bug = new Error("the host's own bug");
  await register(peer, client, "broken", () => {
    throw bug;
  });
  const reply = await produce(peer, "promptd-10", { provider: "broken", session: "s", user_message: "x" });
  const error = reply["error"] as { code: number; message: string; data: { kind: string; provider: string } };
  assert.equal(error.code, -32603);
  assert.deepEqual(error.data, { kind: "internal", provider: "broken" });
  assert.equal(JSON.stringify(error).includes("own bug"), false, "the detail stays in the host");
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof HostProviderError);
  assert.equal(errors[0].provider, "broken");
  assert.equal(errors[0].cause, bug);
});

test("registerHostProvider sends providers/register with kind host and keeps the handler", async () => {
  const { peer, client } = clientOnFake();
  const registered = client.registerHostProvider({ name: "clock", key: "host.clock", scope: "per_turn" }, () => ({ text: "noon" }));
  const request = await peer.nextCall("providers/register");
  assert.deepEqual(request["params"], { name: "clock", key: "host.clock", scope: "per_turn", kind: "host" });
  peer.reply(request["id"], {});
  assert.deepEqual(await registered, {});
  const reply = await produce(peer, "promptd-7", { provider: "clock", session: "s", user_message: "x" });
  assert.deepEqual(reply["result"], { text: "noon" });
});

test("when the server refuses the registration, nothing changes locally (an existing handler stays)", async () => {
  const { peer, client } = clientOnFake();
  await register(peer, client, "first", () => ({ text: "first" }));
  const again = client.registerHostProvider({ name: "first", key: "k" }, () => ({ text: "second" }));
  const duplicate = await peer.nextCall("providers/register");
  peer.fail(duplicate["id"], -32042, "a provider with this name is already registered", { kind: "provider_exists" });
  await assert.rejects(again, { code: -32042 });
  assert.deepEqual((await produce(peer, "promptd-8a", { provider: "first", session: "s", user_message: "x" }))["result"], { text: "first" });
  const registered = client.registerHostProvider({ name: "dup", key: "k" }, () => ({ text: "x" }));
  const request = await peer.nextCall("providers/register");
  peer.fail(request["id"], -32602, "Invalid params", { kind: "invalid_params" });
  await assert.rejects(registered, { code: -32602 });
  const reply = await produce(peer, "promptd-8", { provider: "dup", session: "s", user_message: "x" });
  assert.equal((reply["error"] as { data: { kind: string } }).data.kind, "unknown_provider");
});

test("event notifications are surfaced by name, and other notifications are not", async () => {
  const { peer, client } = clientOnFake();
  const all: Array<[string, unknown]> = [];
  const gates: unknown[] = [];
  client.onEvent((event, params) => all.push([event, params]));
  client.onEvent((_event, params) => gates.push(params), "event/gate_fired");
  peer.send({ jsonrpc: "2.0", method: "event/gate_fired", params: { fires: 1 } });
  peer.send({ jsonrpc: "2.0", method: "event/spilled", params: { path: "/p" } });
  peer.send({ jsonrpc: "2.0", method: "not/an_event", params: {} });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(all, [
    ["event/gate_fired", { fires: 1 }],
    ["event/spilled", { path: "/p" }],
  ]);
  assert.deepEqual(gates, [{ fires: 1 }]);
});

test("typed wrappers send the protocol method name and params unchanged", async () => {
  const { peer, client } = clientOnFake();
  const call = client.reminderWrapMany({ parts: [{ key: "a", body: "b" }] });
  const request = await peer.nextCall("reminder/wrap_many");
  assert.deepEqual(request["params"], { parts: [{ key: "a", body: "b" }] });
  peer.reply(request["id"], { text: "t" });
  assert.deepEqual(await call, { text: "t" });
  const keys = client.reminderKeys();
  const keysRequest = await peer.nextCall("reminder/keys");
  assert.deepEqual(keysRequest["params"], {});
  peer.reply(keysRequest["id"], { keys: [] });
  assert.deepEqual(await keys, { keys: [] });
});

test("stop without a process sends shutdown then exit, in that order, and disposes", async () => {
  const { peer, client } = clientOnFake();
  const stopped = client.stop();
  const shutdown = await peer.nextCall("shutdown");
  peer.reply(shutdown["id"], {});
  const exit = await peer.nextCall("exit");
  assert.equal("id" in exit, false);
  await stopped;
  assert.equal(client.connection.state, "disposed");
});

test("calls made while stop runs, or after it, fail with ConnectionClosedError; so does a -32002 refusal", async () => {
  const { peer, client } = clientOnFake();
  const closes: Array<Error | undefined> = [];
  client.onClose((error) => closes.push(error));
  const inFlight = client.reminderKeys();
  const inFlightRequest = await peer.nextCall("reminder/keys");
  const stopped = client.stop();
  await assert.rejects(client.reminderKeys(), ConnectionClosedError);
  await assert.rejects(client.notify("exit", {}), ConnectionClosedError);
  peer.fail(inFlightRequest["id"], -32002, "Server is shut down");
  const raced = await inFlight.catch((error: unknown) => error);
  assert.ok(raced instanceof ConnectionClosedError, String(raced));
  assert.ok(!(raced instanceof ResponseError));
  const shutdown = await peer.nextCall("shutdown");
  peer.reply(shutdown["id"], {});
  await peer.nextCall("exit");
  await stopped;
  await assert.rejects(client.reminderKeys(), ConnectionClosedError);
  assert.deepEqual(closes, [undefined]);
});

test("a request still waiting when stop disposes the connection fails with ConnectionClosedError", async () => {
  const { peer, client } = clientOnFake();
  const waiting = client.reminderKeys();
  await peer.nextCall("reminder/keys");
  const stopped = client.stop({ graceMs: 50 });
  await stopped;
  await assert.rejects(waiting, ConnectionClosedError);
});

test("there is no raw shutdown wrapper: stop() is the one way to end the sidecar", () => {
  assert.equal("shutdown" in PromptdClient.prototype, false);
  assert.equal(typeof PromptdClient.prototype.stop, "function");
});

test("a request whose line is over maxMessageBytes is refused before sending, with a clear error", async () => {
  const peer = new FakePeer();
  const client = new PromptdClient(peer.connect({ maxMessageBytes: 1_000 }));
  const error = await client.reminderWrap({ key: "k", body: "é".repeat(600) }).catch((caught: unknown) => caught);
  assert.ok(error instanceof MessageTooLargeError, String(error));
  assert.equal(error.method, "reminder/wrap");
  assert.equal(error.limit, 1_000);
  assert.ok(error.bytes > 1_000);
  assert.match(error.message, /reminder\/wrap was not sent: its line is \d+ bytes, over the 1000-byte limit/);
  // Nothing was written, and the connection goes on.
  const small = client.reminderWrap({ key: "k", body: "é".repeat(100) });
  const request = await peer.nextCall("reminder/wrap");
  assert.equal((request["params"] as { body: string }).body.length, 100);
  peer.reply(request["id"], { text: "ok" });
  assert.deepEqual(await small, { text: "ok" });
  assert.equal(peer.received.length, 0);
});

test("the package exports its public API only: the client, the connection, errors, documented defaults, the protocol's constants", async () => {
  const exported = Object.keys(await import("../src/index.js")).sort();
  assert.deepEqual(exported, [
    "CANCEL_METHOD",
    "Connection",
    "ConnectionClosedError",
    "ConnectionDisposedError",
    "ConnectionError",
    "DEFAULT_GRACE_MS",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_REQUEST_TIMEOUT_MS",
    "DEFAULT_START_TIMEOUT_MS",
    "DEFAULT_STDERR_BYTES",
    "DEFAULT_STDERR_LINES",
    "ERROR_KIND_CODES",
    "EVENT_NAMES",
    "EVENT_PREFIX",
    "ErrorCodes",
    "HostProviderError",
    "METHOD_NAMES",
    "MessageTooLargeError",
    "PRODUCE_METHOD",
    "PROTOCOL_VERSION",
    "PromptdClient",
    "ProtocolError",
    "ProtocolVersionError",
    "RequestTimeoutError",
    "ResponseError",
    "StartError",
  ]);
});
