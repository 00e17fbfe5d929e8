// DO NOT EDIT: generated from protocol/openrpc.json by `make -C clients/node generate` (scripts/generate.mjs).

import type { RequestOptions } from "./connection.js";

/** The protocol version of the document these types were generated from. */
export const PROTOCOL_VERSION = "2026-11-01";

/**
 * One project instruction file (AGENTS.md and the like) the host discovered, in precedence
 * order. Carried and persisted with the context; the host delivers it as a reminder, not in the
 * system prompt (docs/templates.md).
 */
export interface AgentsMdFile {
  file_name: string;
  file_path: string;
  content: string;
}

export interface AssembleParams {
  session: string;
  /** @default "" */
  user_message?: string;
  /** @default [] */
  directives?: string[];
  /**
   * What the person is shown as the reason for this reminder, one constituent per source (a directive, a slash command): a list going in because several sources may each add one. The result's `display_trigger` is the one string they become in the block.
   * @default []
   */
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
  /** The display trigger the block carries, as one string: the params' `display_trigger` constituents sanitized, blank ones and repeats left out, joined with "; " (a string coming out, as in reminder/parse's Block.display_trigger); null when none was delivered. */
  display_trigger: string | null;
}

export type Audience = "primary" | "subagent";

export interface Block {
  authenticated: boolean;
  key: string | null;
  body: string;
  display_trigger: string | null;
  start: number;
  end: number;
  style: BlockStyle;
  refusal?: Refusal | null;
}

export type BlockStyle = "pua" | "xml";

export interface CancelParams {
  id: string | number;
}

export interface Capabilities {
  /** @default false */
  host_providers?: boolean;
  /**
   * The event notifications wanted: true for all, false for none, or a list of event names (EventName); an unknown name is refused with invalid_params.
   * @default false
   */
  events?: boolean | EventName[];
}

export interface Change {
  path: string;
  kind: ChangeKind;
  edited: boolean;
}

export type ChangeKind = "tag" | "delimiter" | "nonce" | "tag_characters" | "split_character" | "stale_block" | "too_deep";

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
  /** Offset of the span in the input, in initialize's offset_unit (code points by default). */
  start: number;
  /** End of the span (exclusive), in the same unit. */
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
  /**
   * Names of the tools called while answering the prompt (repeats allowed); the plan tool counts as a todo write. The 0.1 name `tool_calls` is still accepted, for one more version.
   * @default []
   */
  tools_called?: string[];
  /** @default false */
  todo_write?: boolean;
}

/** turn/compose takes reminder/assemble's params and the shape to write the message in. */
export interface ComposeParams {
  session: string;
  /** @default "" */
  user_message?: string;
  /** @default [] */
  directives?: string[];
  /**
   * What the person is shown as the reason for this reminder, one constituent per source (a directive, a slash command): a list going in because several sources may each add one. The result's `display_trigger` is the one string they become in the block.
   * @default []
   */
  display_trigger?: string[];
  /** Overrides reminders.budget_chars */
  budget?: number | null;
  /** Also return the user message in this SDK's own shape (history/sanitize's names): the user's text and the reminder as text parts of their own, in that order (MCP: one text content holding `content`). Without it, `message` is null. */
  shape?: MessageShape | null;
}

export interface ComposeResult {
  /** The user-role message: sanitized user text plus the reminder suffix */
  content: string;
  reminder: AssembleResult;
  /** With the params' `shape`: the user message in that SDK's shape, ready to send and to store; passed back through history/sanitize with the same session it keeps its reminder. Null without `shape`. */
  message: HistoryMessage | null;
}

export interface Config {
  /** promptd's default: 16777216. */
  max_message_bytes?: number;
  /** promptd's default: 67108864. */
  max_in_flight_bytes?: number;
  /** promptd's default: "info". */
  log_level?: LogLevel;
  /** promptd's default: 5000. */
  shutdown_deadline_ms?: number;
  reminders?: RemindersConfig;
  keys?: KeysConfig;
  todo_gate?: TodoGateConfig;
  todo_nudge?: TodoNudgeConfig;
  sessions?: SessionsConfig;
  prompt?: PromptConfig;
  vault?: VaultConfig;
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

/** `data.kind` of an error: what went wrong, machine-readable (see `x-errors` for the code each comes with). */
export type ErrorKind = "parse_error" | "bad_version" | "invalid_method" | "invalid_id" | "invalid_params_type" | "not_an_object" | "empty_batch" | "too_deep" | "too_large" | "duplicate_id" | "method_not_found" | "invalid_params" | "positional_params" | "value_too_large" | "empty_tool_name" | "internal" | "cancelled" | "shut_down" | "invalid_key" | "nested_marker" | "unregistered_key" | "template_syntax" | "template_render" | "render_timeout" | "invalid_context" | "vault_locked" | "unknown_provider" | "provider_exists" | "invalid_provider" | "unknown_session" | "invalid_config" | "already_initialized";

/** The name of an event notification (`capabilities.events` lists some of them). */
export type EventName = "event/provider_skipped" | "event/spilled" | "event/gate_fired" | "event/gate_exhausted" | "event/nudge_fired";

export type Eviction = "oldest" | "least_recent";

export interface FragmentReport {
  provider: string;
  key: string;
  chars: number;
  status: FragmentStatus;
}

export type FragmentStatus = "delivered" | "truncated" | "dropped" | "duplicate";

export interface GateExhaustedEvent {
  session: string;
  prompt_id: string;
  fires: number;
}

export interface GateFiredEvent {
  session: string;
  prompt_id: string;
  /** Fires so far for this session and prompt id. */
  fires: number;
  pending: number;
  unbacked: number;
}

export interface GateParams {
  session: string;
  /** The user prompt this turn answers; fires are counted per prompt */
  prompt_id: string;
  /** @default [] */
  todos?: TodoItem[];
  /**
   * Background tasks running for in-progress todos
   * @default 0
   */
  backing_task_count?: number;
  /** Whether the model's last step asked for a tool call. True means the turn is not over (the host runs the tool and the model goes on) and the gate answers continue; at the end of a turn as docs/todos.md defines it, false. The 0.1 name `tool_called` is still accepted, for one more version. */
  last_step_called_tool: boolean;
}

export interface GateResult {
  decision: "continue" | "nudge";
  /** disabled: todo_gate.enabled is false, the gate never fires; tool_call: the last step called a tool; no_open_todos: nothing pending and every in-progress todo backed; no_fires_allowed: max_fires_per_prompt is 0; exhausted: the cap was reached for this prompt (see notice); open_todos: the nudge. */
  reason: "disabled" | "tool_call" | "no_open_todos" | "no_fires_allowed" | "exhausted" | "open_todos";
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

/**
 * A message as its SDK serializes it (Anthropic, OpenAI Chat or Responses, MCP, Gemini, the
 * Vercel AI SDK): a JSON object, returned with its key order and unknown fields kept.
 */
export type HistoryMessage = Record<string, JsonValue>;

export interface HistorySanitizeParams<Message extends object = HistoryMessage> {
  shape?: MessageShape | null;
  messages: Message[];
  /** The session the conversation belongs to: a turn/compose block is kept only when it was written for that session (one of another session is neutralized). Without it, a block of any session is kept. */
  session?: string | null;
}

export interface HistorySanitizeResult<Message extends object = HistoryMessage> {
  messages: Message[];
  changes: Change[];
  neutralized: number;
  dropped: number;
}

export interface InitializeParams {
  protocol_version?: string | null;
  client_info?: ClientInfo | null;
  capabilities?: Capabilities;
  /** Deep-merged over the process configuration: the shape of promptd.toml (Config), every field optional; an invalid one is refused with invalid_config and changes nothing. */
  config?: Config;
  tools?: Tools | null;
  /**
   * The unit of every offset promptd returns (start/end of citation/parse segments, reminder/parse blocks, content/inspect spans): code_points, utf16_units (JavaScript) or utf8_bytes (Go).
   * @default "code_points"
   */
  offset_unit?: "code_points" | "utf16_units" | "utf8_bytes";
}

export interface InitializeResult {
  protocol_version: string;
  server_info: ServerInfo;
  methods: string[];
  /** The unit of every offset in results, as asked for. */
  offset_unit: "code_points" | "utf16_units" | "utf8_bytes";
  limits: Limits;
}

export interface InspectParams {
  text: string;
  /** @default "tool" */
  origin?: Origin;
}

export interface InspectResult {
  spans: Span[];
}

export type JsonValue = unknown;

export interface KeyEntry {
  key: string;
  purpose: string;
  /** @default "host" */
  introduced_in?: string;
}

export interface KeyInfo {
  key: string;
  purpose: string;
  introduced_in: string;
}

export interface KeysConfig {
  /** promptd's default: false. */
  strict?: boolean;
  /** promptd's default: []. */
  extra?: KeyEntry[];
}

export interface KeysResult {
  keys: KeyInfo[];
}

/** The server's effective limits after `config` was applied, so a client need not be told. */
export interface Limits {
  /** The longest line promptd reads (a request, a notification, an answer to provider/produce), in bytes without the newline; a longer one is refused unread (`too_large`). */
  max_message_bytes: number;
  /** How long a provider's answer is awaited when its registration gives no timeout_ms; a host answer to provider/produce after it is discarded. */
  provider_timeout_ms: number;
}

/**
 * What a prompt/lint violation is (docs/templates.md): a tool name used unguarded, dynamically
 * or aliased, a param used unguarded, a name no render defines, a misspelt tool kind, a construct
 * the reference engine lacks (not_portable), a read of a volatile variable (cache_volatile), a
 * value printed that has no printed form (no_printed_form), or a syntax error.
 */
export type LintKind = "unguarded_tool" | "dynamic_tool" | "aliased_tools" | "unguarded_param" | "undefined_variable" | "unknown_tool_kind" | "not_portable" | "cache_volatile" | "no_printed_form" | "syntax";

export interface LintParams {
  template: string;
  /** Tool kinds exempt from the guard rule; defaults to config prompt.exempt_kinds. */
  exempt_kinds?: string[] | null;
  /**
   * Report names no render defines (undefined_variable). On by default, whatever the render setting.
   * @default true
   */
  strict_undefined?: boolean;
  /**
   * Names of the flags the host sends besides the default ones: defined for the undefined-name check.
   * @default []
   */
  flags?: string[];
  /**
   * Tool kinds the host sends besides the documented ones (not questioned as misspellings).
   * @default []
   */
  tool_kinds?: string[];
  /** Variables whose reads are cache_volatile warnings (their values change per session or per day); defaults to config prompt.volatile_variables. */
  volatile_variables?: string[] | null;
}

export interface LintResult {
  violations: LintViolation[];
}

/**
 * How much a prompt/lint violation matters: an error, or a warning (not_portable,
 * cache_volatile), which alone does not fail `promptd lint`.
 */
export type LintSeverity = "error" | "warning";

export interface LintViolation {
  /** 1-based */
  line: number;
  /** 1-based, in code points */
  column: number;
  /** unguarded_tool, dynamic_tool, aliased_tools, unguarded_param, undefined_variable, unknown_tool_kind, not_portable, cache_volatile, no_printed_form or syntax */
  kind: LintKind;
  message: string;
  /**
   * error, or warning (not_portable, cache_volatile): a warning alone does not fail `promptd lint`.
   * @default "error"
   */
  severity?: LintSeverity;
}

export type LogLevel = "debug" | "info" | "warning" | "error";

export type MarkerForm = "pua" | "ascii" | "object";

export type MessageShape = "anthropic" | "openai_chat" | "openai_responses" | "mcp" | "gemini" | "ai_sdk";

export interface NameParams {
  name: string;
}

export interface NudgeFiredEvent {
  session: string;
  /** The session's turn count after this turn. */
  turn: number;
}

export type OpenAction = "native" | "clipboard" | "browser";

/**
 * Where untrusted text came from. Every origin gets the same full neutralization; the origin
 * is recorded (as log metadata) so operators can see which door forged markup came through.
 */
export type Origin = "user" | "tool" | "model" | "stored";

export interface PersistParams {
  /** The prompt context (docs/templates.md); every field is optional. */
  context?: PromptContext;
}

export interface PersistResult {
  /** The context with every field explicit, ready to store and to render again. */
  context: PromptContext;
}

export interface PrefixChange {
  /** Whether the stable prefix differs from the session's previous render (a provider's prompt cache then starts over). */
  changed: boolean;
  /** The 1-based line of the stable prefix where it first differs; null when unchanged. */
  first_line: number | null;
  /** The template variables whose values changed since the previous render, sorted. */
  variables: string[];
}

export interface ProduceParams {
  /** The host provider's registered name. */
  provider: string;
  /** The session the turn belongs to. */
  session: string;
  /** This turn's user message, as given to reminder/assemble or turn/compose. */
  user_message: string;
}

export interface ProduceResult {
  /** The fragment's text, or null for nothing this turn. */
  text: string | null;
}

export interface PromptConfig {
  /** promptd's default: []. */
  exempt_kinds?: string[];
  /** promptd's default: true. */
  strict_undefined?: boolean;
  /** promptd's default: false. */
  warm_worker?: boolean;
  /** promptd's default: ["current_date", "working_directory"]. */
  volatile_variables?: string[];
  /** promptd's default: 2000. */
  render_timeout_ms?: number;
  /** promptd's default: 512. */
  render_memory_mb?: number;
}

/** The prompt context's structure, with its defaults. */
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
  /**
   * The default of the flag of the same name (a request's flags still win), kept with the context as in the reference pipeline.
   * @default false
   */
  include_browser_verification?: boolean;
  /** The agent's role: rendered for both audiences (a subagent's role is its own). */
  role_instructions?: string | null;
  /** The agent's persona: rendered for both audiences. */
  persona_instructions?: string | null;
  /**
   * Kept for primary; cleared by prompt/persist for subagent.
   * @default []
   */
  role_summaries?: string[];
  /**
   * Kept for primary; cleared by prompt/persist for subagent.
   * @default []
   */
  persona_summaries?: string[];
  /** Where the user's global memory lives (a template variable). */
  memory_global_path?: string | null;
  /** Where this workspace's memory lives (a template variable). */
  memory_workspace_path?: string | null;
  /**
   * Project instruction files in precedence order; carried, not rendered into the prompt.
   * @default []
   */
  agents_md_files?: AgentsMdFile[];
  /** When the host built this context (ISO 8601, UTC); carried, not rendered. */
  build_timestamp_utc?: string | null;
  /** The custom body: appended in extend mode, the whole prompt in full mode. */
  prompt_body?: string | null;
  /**
   * Base template override: "none", "codex" (the sealed Apply-Patch template), {"custom": "..."}, {"sealed": "<id>"} (a template sealed in the vault), or a legacy plain template string (read as {"custom": ...}).
   * @default "none"
   */
  system_prompt?: "none" | "codex" | CustomOverride | SealedOverride;
}

export type PromptMode = "extend" | "full";

export interface ProviderInfo {
  name: string;
  scope: Scope;
  kind: ProviderKind;
  key: string;
  builtin: boolean;
  timeout_ms: number | null;
  /** command: the variables it is given besides the allowlist (names only; empty for other kinds) */
  env: string[];
}

export type ProviderKind = "builtin" | "static" | "file" | "command" | "host";

export interface ProviderSkippedEvent {
  session: string;
  provider: string;
  reason: SkipReason;
  elapsed_ms: number;
}

export interface ProvidersResult {
  providers: ProviderInfo[];
}

export type Refusal = "altered" | "other_process" | "other_session";

export type RegisterKind = "static" | "file" | "command" | "host";

export interface RegisterParams {
  /** Unique provider name, [A-Za-z0-9._-]+ */
  name: string;
  /** @default "per_turn" */
  scope?: Scope;
  kind: RegisterKind;
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
  /**
   * command: names of variables passed from promptd's environment besides the allowlist (PATH, HOME, the locale...); PROMPTD_* names are refused
   * @default []
   */
  env?: string[];
}

export interface ReminderParseParams {
  text: string;
  /** The session the text belongs to: a block authenticates only when it was written for that session (`other_session` otherwise). Without it, a block of any session authenticates. */
  session?: string | null;
}

export interface ReminderParseResult {
  blocks: Block[];
}

export interface ReminderPart {
  key: string;
  body: string;
}

export interface RemindersConfig {
  /** promptd's default: "pua". */
  style?: BlockStyle;
  /** promptd's default: 6000. */
  budget_chars?: number;
  /** promptd's default: 2000. */
  provider_timeout_ms?: number;
  /** promptd's default: null. */
  provenance_key_file?: string | null;
  /** promptd's default: []. */
  provenance_previous_key_files?: string[];
  /** promptd's default: 65536. */
  ledger_max_entries?: number;
  /** promptd's default: "oldest". */
  ledger_eviction?: Eviction;
  /** promptd's default: null. */
  spill_dir?: string | null;
  /** promptd's default: 24. */
  spill_retention_hours?: number;
  /** promptd's default: 1048576. */
  spill_max_file_bytes?: number;
  /** promptd's default: 16777216. */
  spill_max_session_bytes?: number;
  /** promptd's default: 268435456. */
  spill_max_total_bytes?: number;
  /** promptd's default: true. */
  session_metadata?: boolean;
  /** promptd's default: true. */
  project_memory?: boolean;
  /** promptd's default: 20000. */
  project_memory_max_chars?: number;
  /** promptd's default: true. */
  file_modified?: boolean;
  /** promptd's default: []. */
  providers?: Record<string, unknown>[];
}

export interface RenderParams {
  /** The prompt context (docs/templates.md); every field is optional. */
  context?: PromptContext;
  /** The tool set by kind; defaults to the one given at initialize. */
  tools?: Tools | null;
  /** Per tool kind, canonical parameter name -> the client's name (`params.edit.old_string`). */
  params?: Record<string, Record<string, string>>;
  /** Booleans visible to templates (is_windows, system_reminders_enabled, include_browser_verification, ...); only true and false. */
  flags?: Record<string, boolean>;
  /** Strict undefined: a name no render defines is an error, not empty text. Default: config prompt.strict_undefined (true). */
  strict_undefined?: boolean | null;
  /** The session this prompt is for: the result's `prefix_change` then compares it with that session's previous render. */
  session?: string | null;
}

export interface RenderResult {
  text: string;
  /** The base template used (`custom` also for a `{"sealed": id}` override; a sealed primary or subagent is still `primary` / `subagent`), or `full` when the body alone was rendered. */
  template: TemplateName;
  /** Hex SHA-256 of the text as UTF-8 (a lone surrogate as its three-byte WTF-8 form). */
  sha256: string;
  /** Length of the text in Unicode code points. */
  chars: number;
  /** How many leading characters of `text` (up to a line start) depend on no volatile variable (config prompt.volatile_variables: current_date, working_directory): send `text[:stable_prefix_chars]` as the cached block of the system prompt and the rest after it. The whole text when the template renders none of them, as the shipped templates do. */
  stable_prefix_chars: number;
  /** With `session`: how this render's stable prefix compares with that session's previous one; null for its first render or without `session`. */
  prefix_change?: PrefixChange | null;
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

export interface SanitizeValueParams<Value = JsonValue> {
  value: Value;
  /** @default "tool" */
  origin?: Origin;
}

export interface SanitizeValueResult<Value = JsonValue> {
  value: Value;
  neutralized: number;
  changes: Change[];
}

export type Scope = "global" | "per_turn";

/**
 * `{"sealed": "<id>"}`: a base template kept sealed in the vault under that id (config
 * `vault.templates`); opened only while it renders.
 */
export interface SealedOverride {
  sealed: string;
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
  /** @default [] */
  modified_files?: string[];
}

export interface SessionsConfig {
  /** promptd's default: 3600. */
  idle_timeout_s?: number;
  /** promptd's default: 1024. */
  max_sessions?: number;
  /** promptd's default: 256. */
  max_id_bytes?: number;
  /** promptd's default: 16384. */
  max_field_bytes?: number;
  /** promptd's default: 262144. */
  max_session_bytes?: number;
}

export type SkipReason = "timeout" | "error" | "missing" | "too_large" | "unsafe" | "no_host";

export interface SkipReport {
  provider: string;
  reason: SkipReason;
  elapsed_ms: number;
}

export type SourceKind = "file" | "web" | "invalid";

export interface Span {
  start: number;
  end: number;
  kind: SpanKind;
}

export type SpanKind = "tag" | "delimiter" | "nonce" | "tag_characters" | "split_character";

export interface SpillInfo {
  path: string;
  retention_hours: number;
}

export interface SpilledEvent {
  session: string;
  /** The spill file. */
  path: string;
  /** How long the file is kept. */
  retention_hours: number;
}

export interface StripParams {
  text: string;
  /** The session the text belongs to: a block authenticates only when it was written for that session (`other_session` otherwise). Without it, a block of any session authenticates. */
  session?: string | null;
}

export interface StripResult {
  /** What a person is shown: authenticated runtime blocks hidden. */
  text: string;
}

export type TemplateName = "primary" | "subagent" | "apply_patch" | "custom" | "full";

export interface TemplateRead {
  /** The template that reads it: primary, subagent, custom or body. */
  template: string;
  /** The variable as deep as the template names it: `os_name`, `tools.by_kind.read`, `params.edit.old_string`. */
  path: string;
  /** Whether a render with these params defines it (false: a tool kind not sent, a flag not set, a misspelling). */
  defined: boolean;
}

export interface TemplateVariable {
  name: string;
  /** The value a template sees (tools and params as their mappings). */
  value: unknown;
  /** tools / params: the namespaces; context: a context field; derived: computed from the context; runtime: from configuration; flag: set by the request; default_flag: derived, not set by the request. */
  source: VariableSource;
}

export interface TodoGateConfig {
  /** promptd's default: false. */
  enabled?: boolean;
  /** promptd's default: 2. */
  max_fires_per_prompt?: number;
}

export interface TodoItem {
  id: string;
  content: string;
  status: "pending" | "in_progress" | "completed" | "cancelled";
}

export interface TodoNudgeConfig {
  /** promptd's default: true. */
  enabled?: boolean;
  /** promptd's default: 3. */
  turns_since_todo_write?: number;
  /** promptd's default: 5. */
  turns_between_reminders?: number;
}

/** The host's tool set by kind: `{"read": "read_file", "plan": "todo_write"}`. */
export interface Tools {
  by_kind?: Record<string, string>;
}

export type VariableSource = "tools" | "params" | "context" | "derived" | "runtime" | "flag" | "default_flag";

export interface VarsParams {
  /** The prompt context (docs/templates.md); every field is optional. */
  context?: PromptContext;
  /** The tool set by kind; defaults to the one given at initialize. */
  tools?: Tools | null;
  /** Per tool kind, canonical parameter name -> the client's name (`params.edit.old_string`). */
  params?: Record<string, Record<string, string>>;
  /** Booleans visible to templates (is_windows, system_reminders_enabled, include_browser_verification, ...); only true and false. */
  flags?: Record<string, boolean>;
}

export interface VarsResult {
  /** Every variable a template rendered with these params sees, in merge order. */
  variables: TemplateVariable[];
  /**
   * What the render's templates read, each path once per template in order of first use (sealed templates and templates over 256 KiB are not read).
   * @default []
   */
  reads?: TemplateRead[];
}

export interface VaultConfig {
  /** promptd's default: "auto". */
  key_source?: VaultKeySource;
  /** promptd's default: null. */
  key_file?: string | null;
  /** promptd's default: null. */
  template_file?: string | null;
  /** promptd's default: {}. */
  templates?: Record<string, unknown>;
}

export type VaultKeySource = "auto" | "env" | "key_file" | "shipped";

export interface WrapManyParams {
  parts: ReminderPart[];
  /** @default false */
  nonce?: boolean;
  /** With `nonce`: the session the block is for; it then authenticates only in that session (none: a block of no session). */
  session?: string | null;
}

export interface WrapParams {
  /** Reminder key, [A-Za-z0-9._-]+ */
  key: string;
  body: string;
  /** @default false */
  nonce?: boolean;
  /** With `nonce`: the session the block is for; it then authenticates only in that session (none: a block of no session). */
  session?: string | null;
}

export interface WrapResult {
  text: string;
}

/** Every request method: its params (by name) and its result. */
export interface Methods {
  "citation/describe": {
    params: CitationDescribeParams;
    result: CitationDescribeResult;
  };
  "citation/export": {
    params: CitationExportParams;
    result: CitationExportResult;
  };
  "citation/parse": {
    params: CitationParseParams;
    result: CitationParseResult;
  };
  "citation/strip": {
    params: CitationStripParams;
    result: CitationStripResult;
  };
  "content/inspect": {
    params: InspectParams;
    result: InspectResult;
  };
  "content/sanitize": {
    params: SanitizeParams;
    result: SanitizeResult;
  };
  "content/sanitize_value": {
    params: SanitizeValueParams<unknown>;
    result: SanitizeValueResult<unknown>;
  };
  "history/sanitize": {
    params: HistorySanitizeParams<object>;
    result: HistorySanitizeResult<object>;
  };
  "initialize": {
    params: InitializeParams;
    result: InitializeResult;
  };
  "prompt/lint": {
    params: LintParams;
    result: LintResult;
  };
  "prompt/persist": {
    params: PersistParams;
    result: PersistResult;
  };
  "prompt/render": {
    params: RenderParams;
    result: RenderResult;
  };
  "prompt/vars": {
    params: VarsParams;
    result: VarsResult;
  };
  "providers/list": {
    params: Empty;
    result: ProvidersResult;
  };
  "providers/register": {
    params: RegisterParams;
    result: Empty;
  };
  "providers/unregister": {
    params: NameParams;
    result: Empty;
  };
  "reminder/assemble": {
    params: AssembleParams;
    result: AssembleResult;
  };
  "reminder/keys": {
    params: Empty;
    result: KeysResult;
  };
  "reminder/parse": {
    params: ReminderParseParams;
    result: ReminderParseResult;
  };
  "reminder/strip": {
    params: StripParams;
    result: StripResult;
  };
  "reminder/wrap": {
    params: WrapParams;
    result: WrapResult;
  };
  "reminder/wrap_many": {
    params: WrapManyParams;
    result: WrapResult;
  };
  "rpc.discover": {
    params: Empty;
    result: DiscoverResult;
  };
  "session/close": {
    params: SessionParams;
    result: Empty;
  };
  "session/update": {
    params: SessionUpdateParams;
    result: Empty;
  };
  "shutdown": {
    params: Empty;
    result: Empty;
  };
  "todo/gate": {
    params: GateParams;
    result: GateResult;
  };
  "turn/complete": {
    params: CompleteParams;
    result: Empty;
  };
  "turn/compose": {
    params: ComposeParams;
    result: ComposeResult;
  };
}

/** Notifications the client sends (never answered). */
export interface Notifications {
  "$/cancelRequest": {
    params: CancelParams;
  };
  "exit": {
    params: Empty;
  };
}

/** Requests the server sends the client, which the client answers. */
export interface ServerRequests {
  "provider/produce": {
    params: ProduceParams;
    result: ProduceResult;
  };
}

/** Event notifications the server sends: each event's payload. */
export interface Events {
  /** Notification. A provider gave nothing this turn: it timed out, failed, found nothing, was too large, or no host answers for it. */
  "event/provider_skipped": ProviderSkippedEvent;
  /** Notification. A truncated fragment was written whole to a spill file the reminder points to. */
  "event/spilled": SpilledEvent;
  /** Notification. todo/gate nudged: open todos remain and the turn ended without a tool call. */
  "event/gate_fired": GateFiredEvent;
  /** Notification. todo/gate reached its cap for this prompt (sent once per prompt). */
  "event/gate_exhausted": GateExhaustedEvent;
  /** Notification. A turn that delivered the todo nudge reminder completed (turn/complete). */
  "event/nudge_fired": NudgeFiredEvent;
}

export type ServerRequestName = keyof ServerRequests;
export const EVENT_NAMES: readonly (keyof Events)[] = ["event/provider_skipped","event/spilled","event/gate_fired","event/gate_exhausted","event/nudge_fired"];

/** An event handler's arguments: narrowing `event` narrows `params`. */
export type EventArgs = { [E in keyof Events]: [event: E, params: Events[E]] }[keyof Events];

/**
 * Every error code on the wire (JSON-RPC's, LSP's cancel code, promptd's -32000..-32099), by
 * name. Branch on `code` and `data.kind` (ErrorKind), never on the message.
 */
export const ErrorCodes = {
  /** Parse error (data.kind: `parse_error`) */
  ParseError: -32700,
  /** Invalid Request (data.kind: `bad_version`, `invalid_method`, `invalid_id`, `invalid_params_type`, `not_an_object`, `empty_batch`, `too_deep`, `too_large`, `duplicate_id`) */
  InvalidRequest: -32600,
  /** Method not found (data.kind: `method_not_found`) */
  MethodNotFound: -32601,
  /** Invalid params (data.kind: `invalid_params`, `positional_params`, `value_too_large`, `empty_tool_name`) */
  InvalidParams: -32602,
  /** Internal error (data.kind: `internal`) */
  InternalError: -32603,
  /** Request cancelled (data.kind: `cancelled`) */
  RequestCancelled: -32800,
  /** Server is shut down (data.kind: `shut_down`) */
  ServerShutDown: -32002,
  /** A reminder key outside [A-Za-z0-9._-]+ or longer than 128 characters. (data.kind: `invalid_key`) */
  InvalidKey: -32010,
  /** A reminder body that contains reminder markup. (data.kind: `nested_marker`) */
  NestedMarker: -32011,
  /** A key that is neither reserved nor added by the host, with `keys.strict`. (data.kind: `unregistered_key`) */
  UnregisteredKey: -32012,
  /** A prompt template that does not parse or compile (`reason` `compile_limit`: nested deeper than Python can compile). (data.kind: `template_syntax`) */
  TemplateSyntax: -32020,
  /** A prompt template that failed while rendering (`error` `security`: over a sandbox bound or `prompt.render_memory_mb`). (data.kind: `template_render`) */
  TemplateRender: -32021,
  /** A caller's template (custom or body, or one being linted) that took more CPU time than `prompt.render_timeout_ms` (`limit_ms`); its render was stopped. (data.kind: `render_timeout`) */
  RenderTimeout: -32022,
  /** A prompt context field that is unknown or invalid (`field`). (data.kind: `invalid_context`) */
  InvalidContext: -32023,
  /** The prompt vault could not be opened. (data.kind: `vault_locked`) */
  VaultLocked: -32030,
  /** No provider by that name (also what a client answers `provider/produce` with for a name it does not serve). (data.kind: `unknown_provider`) */
  UnknownProvider: -32041,
  /** A provider by that name is already registered. (data.kind: `provider_exists`) */
  ProviderExists: -32042,
  /** A provider registration that does not fit its kind (`field`). (data.kind: `invalid_provider`) */
  InvalidProvider: -32043,
  /** A method that needs a session the host already used (`turn/complete`) named one this process does not hold: never used, closed, or evicted (`session`). (data.kind: `unknown_session`) */
  UnknownSession: -32050,
  /** A configuration (file, environment or `initialize` override) that is invalid. (data.kind: `invalid_config`) */
  InvalidConfig: -32060,
  /** `initialize` was called a second time. (data.kind: `already_initialized`) */
  AlreadyInitialized: -32061,
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** The code each `data.kind` comes with. */
export const ERROR_KIND_CODES: Readonly<Record<ErrorKind, ErrorCode>> = {
  parse_error: -32700,
  bad_version: -32600,
  invalid_method: -32600,
  invalid_id: -32600,
  invalid_params_type: -32600,
  not_an_object: -32600,
  empty_batch: -32600,
  too_deep: -32600,
  too_large: -32600,
  duplicate_id: -32600,
  method_not_found: -32601,
  invalid_params: -32602,
  positional_params: -32602,
  value_too_large: -32602,
  empty_tool_name: -32602,
  internal: -32603,
  cancelled: -32800,
  shut_down: -32002,
  invalid_key: -32010,
  nested_marker: -32011,
  unregistered_key: -32012,
  template_syntax: -32020,
  template_render: -32021,
  render_timeout: -32022,
  invalid_context: -32023,
  vault_locked: -32030,
  unknown_provider: -32041,
  provider_exists: -32042,
  invalid_provider: -32043,
  unknown_session: -32050,
  invalid_config: -32060,
  already_initialized: -32061,
};

export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> = Methods[M]["params"];
export type ResultOf<M extends MethodName> = Methods[M]["result"];
export type NotificationName = keyof Notifications;

export const METHOD_NAMES: readonly MethodName[] = ["citation/describe","citation/export","citation/parse","citation/strip","content/inspect","content/sanitize","content/sanitize_value","history/sanitize","initialize","prompt/lint","prompt/persist","prompt/render","prompt/vars","providers/list","providers/register","providers/unregister","reminder/assemble","reminder/keys","reminder/parse","reminder/strip","reminder/wrap","reminder/wrap_many","rpc.discover","session/close","session/update","shutdown","todo/gate","turn/complete","turn/compose"];

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
  contentSanitizeValue<Value = JsonValue>(params: SanitizeValueParams<Value>, options?: RequestOptions): Promise<SanitizeValueResult<Value>> {
    return this.call("content/sanitize_value", params, options) as Promise<SanitizeValueResult<Value>>;
  }

  /** `history/sanitize`: Makes stored messages safe to reuse: a reminder kept only in turn/compose's exact shape, stale ones dropped, the rest sanitized. */
  historySanitize<Message extends object = HistoryMessage>(params: HistorySanitizeParams<Message>, options?: RequestOptions): Promise<HistorySanitizeResult<Message>> {
    return this.call("history/sanitize", params, options) as Promise<HistorySanitizeResult<Message>>;
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

  /** `prompt/render`: Renders the system prompt for a prompt context: text, template used, sha256, length. */
  promptRender(params: ParamsOf<"prompt/render"> = {}, options?: RequestOptions): Promise<ResultOf<"prompt/render">> {
    return this.call("prompt/render", params, options);
  }

  /** `prompt/vars`: Every variable a template would see for these render params, with its value and source, and what the render's templates read. */
  promptVars(params: ParamsOf<"prompt/vars"> = {}, options?: RequestOptions): Promise<ResultOf<"prompt/vars">> {
    return this.call("prompt/vars", params, options);
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

  /** `reminder/wrap`: Wraps one body in a <system-reminder key="..."> block (the keyed reminder format). */
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
