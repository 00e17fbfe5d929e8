// Command host is what a new user writes first: it depends on the client from its own module
// (go.mod: require + replace, see README.md), imports it without an alias, starts the sidecar,
// renders a system prompt, composes a turn and closes. promptd/module_test.go builds and runs
// it; CI can do the same with the commands in README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/promptd/promptd/clients/go/promptd"
)

func main() {
	path := os.Getenv("PROMPTD")
	if path == "" {
		path = "promptd"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	client, err := promptd.Start(ctx, path, promptd.Options{
		Initialize: promptd.InitializeParams{
			ClientInfo: &promptd.ClientInfo{Name: "example-host"},
			Tools:      &promptd.Tools{ByKind: map[string]string{"read": "read_file"}},
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer client.Close(context.Background())

	prompt, err := client.PromptRender(ctx, promptd.PromptRenderParams{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "prompt/render:", err)
		os.Exit(1)
	}
	fmt.Printf("system prompt: %d chars, template %s\n", prompt.Chars, prompt.Template)

	turn, err := client.TurnCompose(ctx, promptd.TurnComposeParams{Session: "s1", UserMessage: "hello"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "turn/compose:", err)
		os.Exit(1)
	}
	fmt.Printf("user message: %q\n", turn.Content)

	if err := client.Close(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		os.Exit(1)
	}
	fmt.Println("closed at", client.Stage())
}
