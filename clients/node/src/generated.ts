// DO NOT EDIT: generated from protocol/openrpc.json by `make -C clients/node generate` (scripts/generate.mjs).

import type { RequestOptions } from "./connection.js";

/** The protocol version of the document these types were generated from. */
export const PROTOCOL_VERSION = "2026-11-01";

export interface AssembleParams {
  session: string;
  /** @default "" */
  user_message?: string;
  directives?: string[];
  display_trigger?: string[];
  /** Overrides reminders.budget_chars */
  budget?: number | null;
}

export interface AssembleResult {
  /** The wrapped block, empty when nothing was delivered */
  text: string;
  body: string;
  fragments: FragmentReport[];
  skipped: SkipReport[];
  spill: SpillInfo | null;
  /** Why the truncated fragment could not be spilled */
  spill_failure: string | null;
  /** The display trigger delivered, joined */
  display_trigger: string | null;
}

export type Audience = "primary" | "subagent";

export interface BlockModel {
  authenticated: boolean;
  key: string | null;
  body: string;
  display_trigger: string | null;
  start: number;
  end: number;
  style: "pua" | "xml";
  refusal?: Refusal | null;
}

export interface CancelParams {
  id: string | number;
}

export interface Capabilities {
  /** @default false */
  host_providers?: boolean;
  /** @default false */
  events?: boolean | string[];
}

export interface CitationDescribeParams {
  url: string;
  /** @default true */
  native_open?: boolean;
}

export interface CitationDescribeResult {
  kind: SourceKind;
  label: string;
  icon: string;
  open: OpenAction;
  /** The decoded local path of a file URL (what the clipboard receives); null otherwise. */
  path: string | null;
}

export interface CitationExportParams {
  text: string;
  /** Source id -> {url, title}. */
  sources?: Record<string, CitationSource>;
}

export interface CitationExportResult {
  text: string;
  references: CitationReference[];
}

export interface CitationParseParams {
  text: string;
  /** @default false */
  final?: boolean;
}

export interface CitationParseResult {
  segments: CitationSegment[];
  /** An unfinished marker at the end, to prepend to the next chunk; null when none. */
  pending: string | null;
}

export interface CitationReference {
  number: number;
  ids: string[];
  title: string;
  url: string | null;
}

export interface CitationSegment {
  type: SegmentType;
  /** The exact source text of the span; segments concatenate to the input minus `pending`. */
  text: string;
  /** Payload ids in order, each once; empty for text. */
  ids: string[];
  /** pua, ascii or object; null for text. */
  form: MarkerForm | null;
  /** The marker's type keyword, lower-cased (`cite` for citations); null for text. */
  marker_type: string | null;
  /** Offset of the span in code points. */
  start: number;
  end: number;
}

export interface CitationSource {
  url?: string | null;
  title?: string | null;
}

export interface CitationStripParams {
  text: string;
}

export interface CitationStripResult {
  text: string;
  /** How many markers were removed. */
  removed: number;
}

export interface ClientInfo {
  name: string;
  version?: string | null;
}

export interface CompleteParams {
  session: string;
  tool_calls?: string[];
  /** @default false */
  todo_write?: boolean;
}

export interface ComposeResult {
  /** The user-role message: sanitized user text plus the reminder suffix */
  content: string;
  reminder: AssembleResult;
}

/** `{"custom": "..."}`: a caller-provided base template. */
export interface CustomOverride {
  custom: string;
}

/** The OpenRPC document (see protocol/openrpc.json). */
export interface DiscoverResult {
  openrpc: string;
  [key: string]: unknown;
}

/** No fields: the params of parameterless methods and the result `{}`. */
export type Empty = Record<string, never>;

export interface FragmentReport {
  provider: string;
  key: string;
  chars: number;
  status: "delivered" | "truncated" | "dropped" | "duplicate";
}

export interface GateParams {
  session: string;
  /** The user prompt this turn answers; fires are counted per prompt */
  prompt_id: string;
  todos?: TodoItem[];
  /**
   * Background tasks running for in-progress todos
   * @default 0
   */
  backing_task_count?: number;
  /** Whether the turn ended with a tool call */
  tool_called: boolean;
}

export interface GateResult {
  decision: "continue" | "nudge";
  /** The wrapped reminder to send when the decision is nudge */
  reminder: string | null;
  /** Fires so far for this session and prompt id */
  fires: number;
  exhausted: boolean;
  /** At the cap: a wrapped notice that the limit was reached */
  notice: string | null;
  pending: number;
  unbacked: number;
}

export interface HistoryMessage {
  role: string;
  content: JsonValue;
}

export interface HistorySanitizeParams {
  messages: HistoryMessage[];
}

export interface HistorySanitizeResult {
  messages: HistoryMessage[];
  neutralized: number;
  dropped: number;
}

export interface InitializeParams {
  protocol_version?: string | null;
  client_info?: ClientInfo | null;
  capabilities?: Capabilities;
  config?: Record<string, unknown>;
  tools?: Tools | null;
}

export interface InitializeResult {
  protocol_version: string;
  server_info: ServerInfo;
  methods: string[];
}

export interface InspectParams {
  text: string;
  /** @default "tool" */
  origin?: Origin;
}

export interface InspectResult {
  spans: SpanModel[];
}

export type JsonValue = unknown;

export interface KeyInfoModel {
  key: string;
  purpose: string;
  introduced_in: string;
}

export interface KeysResult {
  keys: KeyInfoModel[];
}

export interface LintParams {
  template: string;
  /** Tool kinds exempt from the guard rule; defaults to config prompt.exempt_kinds. */
  exempt_kinds?: string[] | null;
}

export interface LintResult {
  violations: LintViolation[];
}

export interface LintViolation {
  /** 1-based */
  line: number;
  /** 1-based, in code points */
  column: number;
  /** unguarded_tool, dynamic_tool, aliased_tools or syntax */
  kind: string;
  message: string;
}

export type MarkerForm = "pua" | "ascii" | "object";

export interface NameParams {
  name: string;
}

export type OpenAction = "native" | "clipboard" | "browser";

/**
 * Where untrusted text came from. Every origin gets the same full neutralization; the origin
 * is recorded (as log metadata) so operators can see which door forged markup came through.
 */
export type Origin = "user" | "tool" | "model" | "stored";

export interface ParseParams {
  text: string;
}

export interface ParseResult {
  blocks: BlockModel[];
}

export interface PersistParams {
  /** Seed 004's prompt context; every field is optional. */
  context?: PromptContext;
}

export interface PersistResult {
  /** The context with every field explicit, ready to store and to render again. */
  context: PromptContext;
}

/** Seed 004's context structure, with its defaults. */
export interface PromptContext {
  /**
   * Structure version; only 1 is supported.
   * @default 1
   */
  version?: number;
  /**
   * extend: base template then body; full: the body alone.
   * @default "extend"
   */
  prompt_mode?: PromptMode;
  /**
   * primary: the main agent; subagent: a delegated worker.
   * @default "primary"
   */
  audience?: Audience;
  /** @default false */
  memory_enabled?: boolean;
  /** @default "Grok" */
  system_prompt_label?: string;
  os_name?: string | null;
  shell_path?: string | null;
  working_directory?: string | null;
  current_date?: string | null;
  /**
   * true for SDKs, pipelines and other unattended use.
   * @default false
   */
  is_non_interactive?: boolean;
  /** Injected for the primary audience only. */
  role_instructions?: string | null;
  /** Kept for primary; cleared by prompt/persist for subagent. */
  role_summaries?: string[];
  /** The custom body: appended in extend mode, the whole prompt in full mode. */
  prompt_body?: string | null;
  /**
   * Base template override: "none", "codex" (the sealed Apply-Patch template) or {"custom": "..."}.
   * @default "none"
   */
  system_prompt?: "none" | "codex" | CustomOverride;
}

export type PromptMode = "extend" | "full";

export interface ProviderInfo {
  name: string;
  scope: string;
  kind: string;
  key: string;
  builtin: boolean;
  timeout_ms: number | null;
}

export interface ProvidersResult {
  providers: ProviderInfo[];
}

export type Refusal = "altered" | "other_process";

export interface RegisterParams {
  /** Unique provider name, [A-Za-z0-9._-]+ */
  name: string;
  /** @default "per_turn" */
  scope?: "global" | "per_turn";
  kind: "static" | "file" | "command" | "host";
  /** Reminder key of the fragments it produces */
  key: string;
  /** static: the text */
  text?: string | null;
  /** file: the file (relative paths resolve against the session's cwd) */
  path?: string | null;
  /** command: program and arguments, run without a shell */
  argv?: string[] | null;
  /** Overrides reminders.provider_timeout_ms */
  timeout_ms?: number | null;
  /**
   * file/command: output cap
   * @default 65536
   */
  max_bytes?: number;
}

export interface ReminderPart {
  key: string;
  body: string;
}

export interface RenderParams {
  /** Seed 004's prompt context; every field is optional. */
  context?: PromptContext;
  /** The tool set by kind; defaults to the one given at initialize. */
  tools?: Tools | null;
  /** Per tool kind, canonical parameter name -> the client's name (`params.edit.old_string`). */
  params?: Record<string, Record<string, string>>;
  /** Booleans visible to templates (is_windows, system_reminders_enabled, include_browser_verification, ...). */
  flags?: Record<string, boolean>;
}

export interface RenderResult {
  text: string;
  /** The base template used, or `full` when the body alone was rendered. */
  template: TemplateName;
  /** Hex SHA-256 of the UTF-8 text. */
  sha256: string;
  /** Length of the text in Unicode code points. */
  chars: number;
}

export interface SanitizeParams {
  text: string;
  /** @default "tool" */
  origin?: Origin;
}

export interface SanitizeResult {
  text: string;
  neutralized: number;
}

export interface SanitizeValueParams {
  value: JsonValue;
  /** @default "tool" */
  origin?: Origin;
}

export interface SanitizeValueResult {
  value: JsonValue;
  neutralized: number;
}

export type SegmentType = "text" | "citation" | "marker";

export interface ServerInfo {
  name: string;
  version: string;
}

export interface SessionParams {
  session: string;
}

export interface SessionUpdateParams {
  session: string;
  cwd?: string | null;
  date?: string | null;
  os_name?: string | null;
  shell?: string | null;
  env?: Record<string, string> | null;
  tools?: Tools | null;
  modified_files?: string[];
}

export interface SkipReport {
  provider: string;
  reason: "timeout" | "error" | "missing" | "too_large" | "no_host";
  elapsed_ms: number;
}

export type SourceKind = "file" | "web" | "invalid";

export type SpanKind = "tag" | "delimiter" | "nonce" | "tag_characters";

export interface SpanModel {
  start: number;
  end: number;
  kind: SpanKind;
}

export interface SpillInfo {
  path: string;
  retention_hours: number;
}

export interface StripParams {
  text: string;
}

export interface StripResult {
  /** What a person is shown: authenticated runtime blocks hidden. */
  text: string;
}

export type TemplateName = "primary" | "subagent" | "apply_patch" | "custom" | "full";

export interface TodoItem {
  id: string;
  content: string;
  status: "pending" | "in_progress" | "completed" | "cancelled";
}

/** The host's tool set by kind: `{"read": "read_file", "plan": "todo_write"}`. */
export interface Tools {
  by_kind?: Record<string, string>;
}

export interface WrapManyParams {
  parts: ReminderPart[];
  /** @default false */
  nonce?: boolean;
}

export interface WrapParams {
  /** Reminder key, [A-Za-z0-9._-]+ */
  key: string;
  body: string;
  /** @default false */
  nonce?: boolean;
}

export interface WrapResult {
  text: string;
}

/** Every request method: its params (by name) and its result. */
export interface Methods {
  "citation/describe": {
    params: {
      url: string;
      /** @default true */
      native_open?: boolean;
    };
    result: CitationDescribeResult;
  };
  "citation/export": {
    params: {
      text: string;
      /** Source id -> {url, title}. */
      sources?: Record<string, CitationSource>;
    };
    result: CitationExportResult;
  };
  "citation/parse": {
    params: {
      text: string;
      /** @default false */
      final?: boolean;
    };
    result: CitationParseResult;
  };
  "citation/strip": {
    params: {
      text: string;
    };
    result: CitationStripResult;
  };
  "content/inspect": {
    params: {
      text: string;
      /** @default "tool" */
      origin?: Origin;
    };
    result: InspectResult;
  };
  "content/sanitize": {
    params: {
      text: string;
      /** @default "tool" */
      origin?: Origin;
    };
    result: SanitizeResult;
  };
  "content/sanitize_value": {
    params: {
      value: JsonValue;
      /** @default "tool" */
      origin?: Origin;
    };
    result: SanitizeValueResult;
  };
  "history/sanitize": {
    params: {
      messages: HistoryMessage[];
    };
    result: HistorySanitizeResult;
  };
  "initialize": {
    params: {
      protocol_version?: string | null;
      client_info?: ClientInfo | null;
      capabilities?: Capabilities;
      config?: Record<string, unknown>;
      tools?: Tools | null;
    };
    result: InitializeResult;
  };
  "prompt/lint": {
    params: {
      template: string;
      /** Tool kinds exempt from the guard rule; defaults to config prompt.exempt_kinds. */
      exempt_kinds?: string[] | null;
    };
    result: LintResult;
  };
  "prompt/persist": {
    params: {
      /** Seed 004's prompt context; every field is optional. */
      context?: PromptContext;
    };
    result: PersistResult;
  };
  "prompt/render": {
    params: {
      /** Seed 004's prompt context; every field is optional. */
      context?: PromptContext;
      /** The tool set by kind; defaults to the one given at initialize. */
      tools?: Tools | null;
      /** Per tool kind, canonical parameter name -> the client's name (`params.edit.old_string`). */
      params?: Record<string, Record<string, string>>;
      /** Booleans visible to templates (is_windows, system_reminders_enabled, include_browser_verification, ...). */
      flags?: Record<string, boolean>;
    };
    result: RenderResult;
  };
  "providers/list": {
    params: Record<string, never>;
    result: ProvidersResult;
  };
  "providers/register": {
    params: {
      /** Unique provider name, [A-Za-z0-9._-]+ */
      name: string;
      /** @default "per_turn" */
      scope?: "global" | "per_turn";
      kind: "static" | "file" | "command" | "host";
      /** Reminder key of the fragments it produces */
      key: string;
      /** static: the text */
      text?: string | null;
      /** file: the file (relative paths resolve against the session's cwd) */
      path?: string | null;
      /** command: program and arguments, run without a shell */
      argv?: string[] | null;
      /** Overrides reminders.provider_timeout_ms */
      timeout_ms?: number | null;
      /**
       * file/command: output cap
       * @default 65536
       */
      max_bytes?: number;
    };
    result: Empty;
  };
  "providers/unregister": {
    params: {
      name: string;
    };
    result: Empty;
  };
  "reminder/assemble": {
    params: {
      session: string;
      /** @default "" */
      user_message?: string;
      directives?: string[];
      display_trigger?: string[];
      /** Overrides reminders.budget_chars */
      budget?: number | null;
    };
    result: AssembleResult;
  };
  "reminder/keys": {
    params: Record<string, never>;
    result: KeysResult;
  };
  "reminder/parse": {
    params: {
      text: string;
    };
    result: ParseResult;
  };
  "reminder/strip": {
    params: {
      text: string;
    };
    result: StripResult;
  };
  "reminder/wrap": {
    params: {
      /** Reminder key, [A-Za-z0-9._-]+ */
      key: string;
      body: string;
      /** @default false */
      nonce?: boolean;
    };
    result: WrapResult;
  };
  "reminder/wrap_many": {
    params: {
      parts: ReminderPart[];
      /** @default false */
      nonce?: boolean;
    };
    result: WrapResult;
  };
  "rpc.discover": {
    params: Record<string, never>;
    result: DiscoverResult;
  };
  "session/close": {
    params: {
      session: string;
    };
    result: Empty;
  };
  "session/update": {
    params: {
      session: string;
      cwd?: string | null;
      date?: string | null;
      os_name?: string | null;
      shell?: string | null;
      env?: Record<string, string> | null;
      tools?: Tools | null;
      modified_files?: string[];
    };
    result: Empty;
  };
  "shutdown": {
    params: Record<string, never>;
    result: Empty;
  };
  "todo/gate": {
    params: {
      session: string;
      /** The user prompt this turn answers; fires are counted per prompt */
      prompt_id: string;
      todos?: TodoItem[];
      /**
       * Background tasks running for in-progress todos
       * @default 0
       */
      backing_task_count?: number;
      /** Whether the turn ended with a tool call */
      tool_called: boolean;
    };
    result: GateResult;
  };
  "turn/complete": {
    params: {
      session: string;
      tool_calls?: string[];
      /** @default false */
      todo_write?: boolean;
    };
    result: Empty;
  };
  "turn/compose": {
    params: {
      session: string;
      /** @default "" */
      user_message?: string;
      directives?: string[];
      display_trigger?: string[];
      /** Overrides reminders.budget_chars */
      budget?: number | null;
    };
    result: ComposeResult;
  };
}

/** Notifications the client sends (never answered). */
export interface Notifications {
  "$/cancelRequest": {
    params: {
      id: string | number;
    };
  };
  "exit": {
    params: Record<string, never>;
  };
}

export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> = Methods[M]["params"];
export type ResultOf<M extends MethodName> = Methods[M]["result"];
export type NotificationName = keyof Notifications;

export const METHOD_NAMES: readonly MethodName[] = ["citation/describe","citation/export","citation/parse","citation/strip","content/inspect","content/sanitize","content/sanitize_value","history/sanitize","initialize","prompt/lint","prompt/persist","prompt/render","providers/list","providers/register","providers/unregister","reminder/assemble","reminder/keys","reminder/parse","reminder/strip","reminder/wrap","reminder/wrap_many","rpc.discover","session/close","session/update","shutdown","todo/gate","turn/complete","turn/compose"];

/** One typed wrapper per request method; PromptdClient supplies `call`. */
export abstract class GeneratedMethods {
  abstract call<M extends MethodName>(method: M, params: ParamsOf<M>, options?: RequestOptions): Promise<ResultOf<M>>;

  /** `citation/describe`: Kind, label, icon and open action for a citation source URL. */
  citationDescribe(params: ParamsOf<"citation/describe">, options?: RequestOptions): Promise<ResultOf<"citation/describe">> {
    return this.call("citation/describe", params, options);
  }

  /** `citation/export`: Plain text for copying: citations as [n] references and a Sources list. */
  citationExport(params: ParamsOf<"citation/export">, options?: RequestOptions): Promise<ResultOf<"citation/export">> {
    return this.call("citation/export", params, options);
  }

  /** `citation/parse`: Splits model output into text, citation and marker segments; an unfinished marker at the end is `pending`. */
  citationParse(params: ParamsOf<"citation/parse">, options?: RequestOptions): Promise<ResultOf<"citation/parse">> {
    return this.call("citation/parse", params, options);
  }

  /** `citation/strip`: The text with citation markers removed, for logs and previews. */
  citationStrip(params: ParamsOf<"citation/strip">, options?: RequestOptions): Promise<ResultOf<"citation/strip">> {
    return this.call("citation/strip", params, options);
  }

  /** `content/inspect`: Finds what content/sanitize would neutralize, without editing: for content a coding agent will edit. */
  contentInspect(params: ParamsOf<"content/inspect">, options?: RequestOptions): Promise<ResultOf<"content/inspect">> {
    return this.call("content/inspect", params, options);
  }

  /** `content/sanitize`: Neutralizes forged reminder markup in untrusted text. */
  contentSanitize(params: ParamsOf<"content/sanitize">, options?: RequestOptions): Promise<ResultOf<"content/sanitize">> {
    return this.call("content/sanitize", params, options);
  }

  /** `content/sanitize_value`: Sanitizes every string and key of a structured (JSON) tool result. */
  contentSanitizeValue(params: ParamsOf<"content/sanitize_value">, options?: RequestOptions): Promise<ResultOf<"content/sanitize_value">> {
    return this.call("content/sanitize_value", params, options);
  }

  /** `history/sanitize`: Makes stored messages safe to reuse: a reminder kept only in turn/compose's exact shape, stale ones dropped, the rest sanitized. */
  historySanitize(params: ParamsOf<"history/sanitize">, options?: RequestOptions): Promise<ResultOf<"history/sanitize">> {
    return this.call("history/sanitize", params, options);
  }

  /** `initialize`: Negotiates the protocol version, records client facts, applies config overrides. */
  initialize(params: ParamsOf<"initialize"> = {}, options?: RequestOptions): Promise<ResultOf<"initialize">> {
    return this.call("initialize", params, options);
  }

  /** `prompt/lint`: Checks that every ${{ tools.by_kind.X }} sits inside a condition on tools.by_kind.X. */
  promptLint(params: ParamsOf<"prompt/lint">, options?: RequestOptions): Promise<ResultOf<"prompt/lint">> {
    return this.call("prompt/lint", params, options);
  }

  /** `prompt/persist`: The context normalized for storage (subagent role summaries cleared). */
  promptPersist(params: ParamsOf<"prompt/persist"> = {}, options?: RequestOptions): Promise<ResultOf<"prompt/persist">> {
    return this.call("prompt/persist", params, options);
  }

  /** `prompt/render`: Renders the system prompt for a seed-004 context: text, template used, sha256, length. */
  promptRender(params: ParamsOf<"prompt/render"> = {}, options?: RequestOptions): Promise<ResultOf<"prompt/render">> {
    return this.call("prompt/render", params, options);
  }

  /** `providers/list`: Lists providers in priority order, built-ins first. */
  providersList(params: ParamsOf<"providers/list"> = {}, options?: RequestOptions): Promise<ResultOf<"providers/list">> {
    return this.call("providers/list", params, options);
  }

  /** `providers/register`: Registers a static, file, command or host provider (registration order is priority). */
  providersRegister(params: ParamsOf<"providers/register">, options?: RequestOptions): Promise<ResultOf<"providers/register">> {
    return this.call("providers/register", params, options);
  }

  /** `providers/unregister`: Removes a provider by name. */
  providersUnregister(params: ParamsOf<"providers/unregister">, options?: RequestOptions): Promise<ResultOf<"providers/unregister">> {
    return this.call("providers/unregister", params, options);
  }

  /** `reminder/assemble`: Runs the providers and assembles this turn's reminder under the budget. */
  reminderAssemble(params: ParamsOf<"reminder/assemble">, options?: RequestOptions): Promise<ResultOf<"reminder/assemble">> {
    return this.call("reminder/assemble", params, options);
  }

  /** `reminder/keys`: The reserved-key registry, plus keys the host added. */
  reminderKeys(params: ParamsOf<"reminder/keys"> = {}, options?: RequestOptions): Promise<ResultOf<"reminder/keys">> {
    return this.call("reminder/keys", params, options);
  }

  /** `reminder/parse`: Finds reminder blocks (the configured style's and keyed ones); a block authenticates only if this process wrote exactly its bytes. */
  reminderParse(params: ParamsOf<"reminder/parse">, options?: RequestOptions): Promise<ResultOf<"reminder/parse">> {
    return this.call("reminder/parse", params, options);
  }

  /** `reminder/strip`: What a person is shown: the blocks this process wrote hidden, display triggers shown. */
  reminderStrip(params: ParamsOf<"reminder/strip">, options?: RequestOptions): Promise<ResultOf<"reminder/strip">> {
    return this.call("reminder/strip", params, options);
  }

  /** `reminder/wrap`: Wraps one body in a keyed <system-reminder> block (seed 000). */
  reminderWrap(params: ParamsOf<"reminder/wrap">, options?: RequestOptions): Promise<ResultOf<"reminder/wrap">> {
    return this.call("reminder/wrap", params, options);
  }

  /** `reminder/wrap_many`: Wraps ordered parts and joins the blocks with one blank line. */
  reminderWrapMany(params: ParamsOf<"reminder/wrap_many">, options?: RequestOptions): Promise<ResultOf<"reminder/wrap_many">> {
    return this.call("reminder/wrap_many", params, options);
  }

  /** `rpc.discover`: The OpenRPC document of this server. */
  rpcDiscover(params: ParamsOf<"rpc.discover"> = {}, options?: RequestOptions): Promise<ResultOf<"rpc.discover">> {
    return this.call("rpc.discover", params, options);
  }

  /** `session/close`: Forgets a session's state. */
  sessionClose(params: ParamsOf<"session/close">, options?: RequestOptions): Promise<ResultOf<"session/close">> {
    return this.call("session/close", params, options);
  }

  /** `session/update`: Gives a session the host's facts: cwd, date, OS, shell, env, tools, modified files. */
  sessionUpdate(params: ParamsOf<"session/update">, options?: RequestOptions): Promise<ResultOf<"session/update">> {
    return this.call("session/update", params, options);
  }

  /** `todo/gate`: TodoGate: at the end of a turn, nudge when open todos remain and no tool was called. */
  todoGate(params: ParamsOf<"todo/gate">, options?: RequestOptions): Promise<ResultOf<"todo/gate">> {
    return this.call("todo/gate", params, options);
  }

  /** `turn/complete`: Turn accounting: moves the TodoNudge counters and clears delivered notices. */
  turnComplete(params: ParamsOf<"turn/complete">, options?: RequestOptions): Promise<ResultOf<"turn/complete">> {
    return this.call("turn/complete", params, options);
  }

  /** `turn/compose`: The user-role message for a turn: sanitized user text plus the assembled reminder. */
  turnCompose(params: ParamsOf<"turn/compose">, options?: RequestOptions): Promise<ResultOf<"turn/compose">> {
    return this.call("turn/compose", params, options);
  }
}
