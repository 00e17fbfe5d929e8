/**
 * Compiled, never run: the typed wrappers take each SDK's own message type without a cast and
 * give the same type back. test/typecheck.test.ts runs `tsc --noEmit` over this file; every
 * `@ts-expect-error` below must still be an error, so a wrapper that accepted anything fails too.
 */

import type { ModelMessage, UIMessage } from "ai";

import type { PromptdClient } from "../../src/index.js";

export async function typed(client: PromptdClient, uiMessages: UIMessage[], modelMessages: ModelMessage[]): Promise<void> {
  const ui = await client.historySanitize({ messages: uiMessages });
  const uiBack: UIMessage[] = ui.messages;
  const model = await client.historySanitize({ messages: modelMessages, session: "s1" });
  const modelBack: ModelMessage[] = model.messages;
  // The messages' own fields, typed: no index signature in the way.
  const firstId: string | undefined = uiBack[0]?.id;
  const role: ModelMessage["role"] | undefined = modelBack[0]?.role;

  // @ts-expect-error UIMessages come back as UIMessages, not ModelMessages
  const wrong: ModelMessage[] = ui.messages;
  // @ts-expect-error a message is an object
  await client.historySanitize({ messages: ["hello"] });

  const value = await client.contentSanitizeValue({ value: { rows: [{ name: "a" }] } });
  const name: string | undefined = value.value.rows[0]?.name;
  void [firstId, role, wrong, name];
}
