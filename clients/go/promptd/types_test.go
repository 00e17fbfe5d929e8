package promptd

import (
	"encoding/json"
	"strings"
	"testing"
)

// The generated types where the contract is a closed shape rather than `any`.

// system_prompt is "none", "codex", {"custom": ...} or {"sealed": ...}: a struct of alternatives,
// exactly one set, read back from the server into the one it is.
func TestSystemPromptIsOneOfItsShapesBothWaysThroughTheServer(t *testing.T) {
	client := startSidecar(t, Options{})
	for _, tc := range []struct {
		name string
		in   PromptContextSystemPrompt
		wire string
	}{
		{"a name", PromptContextSystemPrompt{Name: PromptContextSystemPromptNameCodex}, `"codex"`},
		{"a custom template", PromptContextSystemPrompt{CustomOverride: &CustomOverride{Custom: "You are terse."}}, `{"custom":"You are terse."}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent, err := json.Marshal(tc.in)
			if err != nil || string(sent) != tc.wire {
				t.Fatalf("marshalled as %s (%v), want %s", sent, err, tc.wire)
			}
			res, err := client.PromptPersist(testContext(t), PromptPersistParams{Context: &PromptContext{SystemPrompt: &tc.in}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(res.Context.SystemPrompt)
			if err != nil || string(got) != tc.wire {
				t.Fatalf("the server gave back %s (%v), want %s", got, err, tc.wire)
			}
		})
	}
	// {"sealed": ...} (a template sealed in the vault, which this server has not) reads into its field.
	var legacy PromptContextSystemPrompt
	if err := json.Unmarshal([]byte(`{"sealed":"mine"}`), &legacy); err != nil || legacy.SealedOverride == nil || legacy.SealedOverride.Sealed != "mine" {
		t.Fatalf("a sealed override read as %+v (%v)", legacy, err)
	}
}

func TestASystemPromptWithNoneOrSeveralShapesSetIsRefusedBeforeItIsSent(t *testing.T) {
	for _, v := range []PromptContextSystemPrompt{
		{},
		{Name: PromptContextSystemPromptNameNone, CustomOverride: &CustomOverride{Custom: "x"}},
	} {
		if _, err := json.Marshal(v); err == nil || !strings.Contains(err.Error(), "set exactly one of Name, CustomOverride, SealedOverride") {
			t.Fatalf("%+v: got %v", v, err)
		}
	}
	var v PromptContextSystemPrompt
	if err := json.Unmarshal([]byte(`{"other":1}`), &v); err == nil {
		t.Fatal("an object of no known shape was read")
	}
}
