import assert from "node:assert/strict";
import { test } from "node:test";

import { PRODUCE_METHOD, PromptdClient, type ProduceRequest } from "../src/index.js";
import { FakePeer } from "./support/fake.js";

function clientOnFake(): { peer: FakePeer; client: PromptdClient } {
  const peer = new FakePeer();
  return { peer, client: new PromptdClient(peer.connect()) };
}

function produce(peer: FakePeer, id: string, params: unknown): Promise<Record<string, unknown>> {
  peer.send({ jsonrpc: "2.0", id, method: PRODUCE_METHOD, params });
  return peer.next((frame) => frame["id"] === id);
}

test("provider/produce is routed to the host provider it names, and its text is returned", async () => {
  const { peer, client } = clientOnFake();
  const asked: ProduceRequest[] = [];
  client.hostProvider("git.status", (request) => {
    asked.push(request);
    return { text: "2 files changed" };
  });
  client.hostProvider("other", () => ({ text: "wrong one" }));
  const reply = await produce(peer, "promptd-1", { provider: "git.status", session: "s1", user_message: "hi" });
  assert.deepEqual(reply["result"], { text: "2 files changed" });
  assert.deepEqual(asked, [{ provider: "git.status", session: "s1", user_message: "hi" }]);
});

test("a host provider may answer null (nothing this turn) and may be async", async () => {
  const { peer, client } = clientOnFake();
  client.hostProvider("quiet", async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { text: null };
  });
  const reply = await produce(peer, "promptd-2", { provider: "quiet", session: null, user_message: "" });
  assert.deepEqual(reply["result"], { text: null });
});

test("produce for a provider this client does not have is answered unknown_provider", async () => {
  const { peer } = clientOnFake();
  const reply = await produce(peer, "promptd-3", { provider: "ghost", session: null, user_message: "x" });
  const error = reply["error"] as { code: number; data: { kind: string; provider: string } };
  assert.equal(error.code, -32041);
  assert.deepEqual(error.data, { kind: "unknown_provider", provider: "ghost" });
});

test("produce with malformed params is answered invalid_params, and the handler is not called", async () => {
  const { peer, client } = clientOnFake();
  let called = false;
  client.hostProvider("p", () => {
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
  client.hostProvider("sloppy", () => ({ text: 5 }) as unknown as { text: string });
  const reply = await produce(peer, "promptd-5", { provider: "sloppy", session: null, user_message: "x" });
  assert.equal((reply["error"] as { code: number }).code, -32603);
});

test("a disposed host provider is no longer served", async () => {
  const { peer, client } = clientOnFake();
  client.hostProvider("gone", () => ({ text: "x" })).dispose();
  const reply = await produce(peer, "promptd-6", { provider: "gone", session: null, user_message: "x" });
  assert.equal((reply["error"] as { data: { kind: string } }).data.kind, "unknown_provider");
});

test("registerHostProvider sends providers/register with kind host and keeps the handler", async () => {
  const { peer, client } = clientOnFake();
  const registered = client.registerHostProvider({ name: "clock", key: "host.clock", scope: "per_turn" }, () => ({ text: "noon" }));
  const request = await peer.nextCall("providers/register");
  assert.deepEqual(request["params"], { name: "clock", key: "host.clock", scope: "per_turn", kind: "host" });
  peer.reply(request["id"], {});
  assert.deepEqual(await registered, {});
  const reply = await produce(peer, "promptd-7", { provider: "clock", session: null, user_message: "x" });
  assert.deepEqual(reply["result"], { text: "noon" });
});

test("when the server refuses the registration, the local handler is removed again", async () => {
  const { peer, client } = clientOnFake();
  const registered = client.registerHostProvider({ name: "dup", key: "k" }, () => ({ text: "x" }));
  const request = await peer.nextCall("providers/register");
  peer.fail(request["id"], -32602, "Invalid params", { kind: "invalid_params" });
  await assert.rejects(registered, { code: -32602 });
  const reply = await produce(peer, "promptd-8", { provider: "dup", session: null, user_message: "x" });
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
