/**
 * Host providers end to end: the client registers a provider of kind "host", the server calls
 * back with `provider/produce` during `reminder/assemble`, and the answer lands in the assembly.
 * Skipped, naming the missing method, while the server does not offer assembly yet.
 */

import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";

import { HostProviderError, type Config, type EventName, type ProduceRequest, type PromptdClient } from "../src/index.js";
import { startClient } from "./support/env.js";

const NEEDED = ["providers/register", "reminder/assemble"];

/** Starts a client, or skips the test when the server lacks a method it needs. */
async function clientWithAssembly(
  t: TestContext,
  hostProviders: boolean,
  config?: Config,
  events: boolean | EventName[] = false,
): Promise<PromptdClient | undefined> {
  const { client } = await startClient(config === undefined ? { hostProviders, events } : { hostProviders, events, config });
  const missing = NEEDED.filter((method) => !client.serverMethods.includes(method));
  if (missing.length > 0) {
    await client.stop();
    t.skip(`the server does not offer ${missing.join(" and ")} yet (not in initialize's methods list)`);
    return undefined;
  }
  return client;
}

test("a host provider registered by the client is asked during assembly and its text is delivered", async (t) => {
  const client = await clientWithAssembly(t, true);
  if (client === undefined) {
    return;
  }
  try {
    const asked: ProduceRequest[] = [];
    await client.registerHostProvider({ name: "node.host", key: "node.status", scope: "per_turn" }, (request) => {
      asked.push(request);
      return { text: "build is green" };
    });
    const result = await client.reminderAssemble({ session: "node-session", user_message: "what next?" });
    assert.deepEqual(asked, [{ provider: "node.host", session: "node-session", user_message: "what next?" }]);
    const fragment = result.fragments.find((entry) => entry.provider === "node.host");
    assert.equal(fragment?.status, "delivered");
    assert.ok(result.body.includes("build is green"));
    assert.ok(result.text.includes("build is green"));
  } finally {
    await client.stop();
  }
});

test("a host provider answering null contributes nothing and is not an error", async (t) => {
  const client = await clientWithAssembly(t, true);
  if (client === undefined) {
    return;
  }
  try {
    await client.registerHostProvider({ name: "node.quiet", key: "node.quiet", scope: "per_turn" }, () => ({ text: null }));
    const result = await client.reminderAssemble({ session: "s", user_message: "hi" });
    assert.equal(result.fragments.some((entry) => entry.provider === "node.quiet" && entry.status === "delivered"), false);
    assert.equal(result.skipped.some((entry) => entry.provider === "node.quiet" && entry.reason === "error"), false);
  } finally {
    await client.stop();
  }
});

test("a host provider that never answers is skipped for timeout, and the assembly still answers", async (t) => {
  const client = await clientWithAssembly(t, true, { reminders: { provider_timeout_ms: 200 } });
  if (client === undefined) {
    return;
  }
  try {
    await client.registerHostProvider({ name: "node.stuck", key: "node.stuck", scope: "per_turn" }, (_request, context) => {
      return new Promise((resolve) => context.signal.addEventListener("abort", () => resolve({ text: null })));
    });
    const result = await client.reminderAssemble({ session: "s", user_message: "hi" }, { timeoutMs: 10_000 });
    const skip = result.skipped.find((entry) => entry.provider === "node.stuck");
    assert.equal(skip?.reason, "timeout");
  } finally {
    await client.stop();
  }
});

test("without the host_providers capability the server skips host providers as no_host", async (t) => {
  const client = await clientWithAssembly(t, false);
  if (client === undefined) {
    return;
  }
  try {
    let called = false;
    await client.registerHostProvider({ name: "node.unheard", key: "node.unheard", scope: "per_turn" }, () => {
      called = true;
      return { text: "x" };
    });
    const result = await client.reminderAssemble({ session: "s", user_message: "hi" });
    assert.equal(result.skipped.find((entry) => entry.provider === "node.unheard")?.reason, "no_host");
    assert.equal(called, false);
  } finally {
    await client.stop();
  }
});

test("a host provider that fails is skipped as error, the subscribed event reports it, and onError gets the exception", async (t) => {
  const client = await clientWithAssembly(t, true, undefined, ["event/provider_skipped"]);
  if (client === undefined) {
    return;
  }
  try {
    const events: Array<[string, unknown]> = [];
    client.onEvent((event, params) => events.push([event, params]));
    const errors: Error[] = [];
    client.onError((error) => errors.push(error));
    await client.registerHostProvider({ name: "node.broken", key: "node.broken", scope: "per_turn" }, () => {
      throw new Error("the host's own bug");
    });
    const result = await client.reminderAssemble({ session: "s", user_message: "hi" });
    assert.equal(result.skipped.find((entry) => entry.provider === "node.broken")?.reason, "error");
    const skipped = events.filter(([event]) => event === "event/provider_skipped").map(([, params]) => params as { provider: string; reason: string });
    assert.ok(skipped.some((event) => event.provider === "node.broken" && event.reason === "error"), JSON.stringify(events));
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof HostProviderError && errors[0].provider === "node.broken");
    assert.match(errors[0].message, /the host's own bug/);
  } finally {
    await client.stop();
  }
});

test("an unregistered host provider is no longer asked", async (t) => {
  const client = await clientWithAssembly(t, true);
  if (client === undefined) {
    return;
  }
  try {
    let asked = 0;
    await client.registerHostProvider({ name: "node.brief", key: "node.brief", scope: "per_turn" }, () => {
      asked += 1;
      return { text: "here" };
    });
    await client.reminderAssemble({ session: "s", user_message: "one" });
    await client.unregisterHostProvider("node.brief");
    const result = await client.reminderAssemble({ session: "s", user_message: "two" });
    assert.equal(asked, 1);
    assert.equal(result.fragments.some((entry) => entry.provider === "node.brief"), false);
  } finally {
    await client.stop();
  }
});
