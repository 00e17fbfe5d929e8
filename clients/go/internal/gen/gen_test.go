package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The package and the document, from this directory.
const (
	packageDir = "../../promptd"
	specPath   = "../../../../protocol/openrpc.json"
)

func TestTheCommittedFilesAreWhatTheGeneratorWritesFromTheCurrentDocument(t *testing.T) {
	files, err := generateFor(specPath, packageDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{TypesFile, MethodsFile} {
		committed, err := os.ReadFile(filepath.Join(packageDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(committed, files[name]) {
			t.Errorf("%s is stale: run `go generate ./...` in clients/go", name)
		}
		if first, _, _ := strings.Cut(string(committed), "\n"); first != Header {
			t.Errorf("%s does not start with the DO-NOT-EDIT line", name)
		}
	}
}

func TestWireNamesBecomeGoNames(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"reminder/wrap_many", "ReminderWrapMany"},
		{"rpc.discover", "RPCDiscover"},
		{"$/cancelRequest", "CancelRequest"},
		{"user_message", "UserMessage"},
		{"url", "URL"},
		{"ids", "IDs"},
		{"sha256", "SHA256"},
		{"Prompt-Input", "PromptInput"},
		{"3d", "X3d"},
		{"JsonValue", "JSONValue"},
		{"KeyInfoModel", "KeyInfoModel"},
		{"HTTPServer", "HTTPServer"},
		{"prompt_id", "PromptID"},
	} {
		if got := exported(tc.in); got != tc.want {
			t.Errorf("exported(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A small document exercising every shape the generator maps.
const sample = `{
  "x-protocol-version": "test-1",
  "methods": [
    {"name": "thing/make", "summary": "Makes a thing.", "params": [
      {"name": "name", "required": true, "schema": {"type": "string"}},
      {"name": "scope", "required": false, "schema": {"$ref": "#/components/schemas/Scope", "default": "global"}},
      {"name": "limit", "required": false, "schema": {"type": "integer", "default": 10}},
      {"name": "quiet", "required": false, "schema": {"type": "boolean", "default": false}},
      {"name": "note", "required": false, "schema": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}},
      {"name": "events", "required": false, "schema": {"anyOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "string"}}]}},
      {"name": "mode", "required": true, "schema": {"anyOf": [{"const": "a"}, {"const": "b"}]}},
      {"name": "tags", "required": false, "schema": {"type": "object", "additionalProperties": {"type": "string"}}},
      {"name": "extra", "required": false, "schema": {"type": "object", "additionalProperties": true}},
      {"name": "value", "required": false, "schema": {}},
      {"name": "override", "required": false, "schema": {"anyOf": [{"enum": ["none", "codex"], "type": "string"}, {"$ref": "#/components/schemas/Custom"}, {"$ref": "#/components/schemas/Sealed"}], "default": "none"}},
      {"name": "either", "required": false, "schema": {"anyOf": [{"$ref": "#/components/schemas/Custom"}, {"$ref": "#/components/schemas/AlsoCustom"}]}}
    ], "result": {"name": "result", "schema": {"$ref": "#/components/schemas/Thing-Output"}}},
    {"name": "thing/drop", "params": [], "result": {"name": "result", "schema": {"$ref": "#/components/schemas/Empty"}}},
    {"name": "thing/stop", "params": [], "result": {"name": "result", "schema": {"$ref": "#/components/schemas/Empty"}}, "x-no-wrapper": true},
    {"name": "thing/poke", "params": []}
  ],
  "components": {"schemas": {
    "Scope": {"enum": ["global", "per_turn"], "type": "string"},
    "Empty": {"type": "object", "properties": {}, "additionalProperties": false},
    "Thing-Output": {"type": "object", "properties": {
      "id": {"type": "integer"},
      "spill": {"anyOf": [{"$ref": "#/components/schemas/Spill"}, {"type": "null"}]},
      "count": {"type": "integer", "default": 3}
    }, "required": ["id", "spill"]},
    "Spill": {"type": "object", "description": "Where it went.", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    "Unused": {"type": "object", "properties": {"x": {"type": "string"}}},
    "Custom": {"type": "object", "properties": {"custom": {"type": "string"}}, "required": ["custom"], "additionalProperties": false},
    "Sealed": {"type": "object", "properties": {"sealed": {"type": "string"}, "note": {"type": "string"}}, "required": ["sealed"], "additionalProperties": false},
    "AlsoCustom": {"type": "object", "properties": {"custom": {"type": "string"}}, "required": ["custom"], "additionalProperties": false}
  }}
}`

func TestTheGeneratorMapsEachSchemaShapeToItsGoType(t *testing.T) {
	files, err := Generate([]byte(sample), map[string]bool{}, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	types, methods := squash(files[TypesFile]), squash(files[MethodsFile])
	for _, tc := range []struct{ what, want string }{
		{"a required string is a value", "Name string `json:\"name\"`"},
		{"a default other than the zero value needs a pointer", "Scope *Scope `json:\"scope,omitempty\"`"},
		{"an integer default of 10 needs a pointer", "Limit *int64 `json:\"limit,omitempty\"`"},
		{"a false default is the zero value", "Quiet bool `json:\"quiet,omitempty\"`"},
		{"a nullable string is a pointer", "Note *string `json:\"note,omitempty\"`"},
		{"true/false or a list is a BoolOrList", "Events *BoolOrList[string] `json:\"events,omitempty\"`"},
		{"a union of literals is a named string", "Mode ThingMakeParamsMode `json:\"mode\"`"},
		{"with its values too", "ThingMakeParamsModeA ThingMakeParamsMode = \"a\""},
		{"a typed map", "Tags map[string]string `json:\"tags,omitempty\"`"},
		{"a free-form object", "Extra map[string]any `json:\"extra,omitempty\"`"},
		{"no schema is any", "Value any `json:\"value,omitempty\"`"},
		{"an enum is a named string", "type Scope string"},
		{"with its values", "ScopePerTurn Scope = \"per_turn\""},
		{"a pydantic -Output name is cleaned", "type ThingOutput struct"},
		{"a required nullable object is a pointer without omitempty", "Spill *Spill `json:\"spill\"`"},
		{"a received field with a default is a value", "Count int64 `json:\"count,omitempty\"`"},
		{"descriptions become comments", "// Where it went."},
		{"the protocol version", "const ProtocolVersion = \"test-1\""},
		{"a string or objects told apart by a field is a struct of alternatives", "Override *ThingMakeParamsOverride `json:\"override,omitempty\"`"},
		{"with a field per alternative", "type ThingMakeParamsOverride struct {\nName ThingMakeParamsOverrideName\nCustom *Custom\nSealed *Sealed\n}"},
		{"read by the field only one alternative has", "if _, ok := fields[\"sealed\"]; ok {"},
		{"objects no field tells apart stay any", "Either any `json:\"either,omitempty\"`"},
	} {
		if !strings.Contains(types, tc.want) {
			t.Errorf("%s: types.go lacks %q", tc.what, tc.want)
		}
	}
	if strings.Contains(types, "Unused") {
		t.Error("a schema no method reaches is generated")
	}
	for _, tc := range []struct{ what, want string }{
		{"a wrapper with params", "func (c *Client) ThingMake(ctx context.Context, params ThingMakeParams) (ThingOutput, error)"},
		{"an empty result returns only the error", "func (c *Client) ThingDrop(ctx context.Context) error"},
	} {
		if !strings.Contains(methods, tc.want) {
			t.Errorf("%s: methods.go lacks %q", tc.what, tc.want)
		}
	}
	if strings.Contains(methods, "ThingPoke") {
		t.Error("a notification got a wrapper")
	}
	if strings.Contains(methods, "ThingStop") {
		t.Error("a method marked x-no-wrapper got a wrapper")
	}
}

func TestGeneratedNamesStayClearOfHandWrittenOnes(t *testing.T) {
	files, err := Generate([]byte(sample), map[string]bool{"Spill": true}, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(squash(files[TypesFile]), "type SpillType struct") {
		t.Error("a schema named like a hand-written type was not renamed")
	}
	if _, err := Generate([]byte(sample), map[string]bool{}, map[string]bool{"ThingMake": true}); err == nil {
		t.Error("a wrapper clashing with a hand-written Client method was generated")
	}
}

func TestTheOutputIsTheSameEveryTime(t *testing.T) {
	spec, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	first, err := Generate(spec, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 { // map iteration order differs run to run; the output must not
		again, err := Generate(spec, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name := range first {
			if !bytes.Equal(first[name], again[name]) {
				t.Fatalf("%s differs between runs", name)
			}
		}
	}
}

// squash collapses runs of spaces (gofmt's alignment) so that expectations can be written plainly.
func squash(src []byte) string {
	lines := strings.Split(string(src), "\n")
	for i, line := range lines {
		lines[i] = strings.Join(strings.Fields(line), " ")
	}
	return strings.Join(lines, "\n")
}

// A method whose params and result hold the caller's own messages (x-caller-type).
const callerTyped = `{
  "methods": [{
    "name": "history/clean",
    "params": [{"name": "messages", "required": true, "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Msg"}, "x-caller-type": "Message"}}],
    "result": {"name": "result", "schema": {"$ref": "#/components/schemas/CleanResult"}}
  }],
  "components": {"schemas": {
    "Msg": {"type": "object", "additionalProperties": true},
    "CleanResult": {"type": "object", "required": ["messages"], "properties": {
      "messages": {"type": "array", "items": {"$ref": "#/components/schemas/Msg"}, "x-caller-type": "RESULT_PARAM"}}}
  }}
}`

func TestXCallerTypeGivesGenericStructsAliasesAndAGenericFunction(t *testing.T) {
	files, err := Generate([]byte(strings.ReplaceAll(callerTyped, "RESULT_PARAM", "Message")), map[string]bool{}, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	types, methods := string(files[TypesFile]), string(files[MethodsFile])
	for _, want := range []string{
		"type HistoryCleanParamsOf[Message any] struct {\n\tMessages []Message `json:\"messages\"`",
		"type HistoryCleanParams = HistoryCleanParamsOf[Msg]",
		"type CleanResultOf[Message any] struct {",
		"type CleanResult = CleanResultOf[Msg]",
	} {
		if !strings.Contains(types, want) {
			t.Errorf("types.go lacks %q:\n%s", want, types)
		}
	}
	for _, want := range []string{
		"func (c *Client) HistoryClean(ctx context.Context, params HistoryCleanParams) (CleanResult, error)",
		"func HistoryCleanOf[Message any](ctx context.Context, c *Client, params HistoryCleanParamsOf[Message]) (CleanResultOf[Message], error)",
	} {
		if !strings.Contains(methods, want) {
			t.Errorf("methods.go lacks %q:\n%s", want, methods)
		}
	}
	// The result must give back the same type parameters.
	if _, err := Generate([]byte(strings.ReplaceAll(callerTyped, "RESULT_PARAM", "Other")), map[string]bool{}, map[string]bool{}); err == nil {
		t.Error("a result with other type parameters than its params' was accepted")
	}
}
