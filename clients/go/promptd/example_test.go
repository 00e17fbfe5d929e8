package promptd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/promptd/promptd/clients/go/promptd"
)

// Spawn promptd, wrap a reminder, look at an error, and shut down in order.
func Example() {
	path := os.Getenv("PROMPTD") // the promptd executable
	if path == "" {
		path = "promptd"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Start spawns `promptd serve` and performs the initialize handshake.
	client, err := promptd.Start(ctx, path, promptd.Options{
		Initialize: promptd.InitializeParams{ClientInfo: &promptd.ClientInfo{Name: "example"}},
	})
	if err != nil {
		fmt.Println("start:", err)
		return
	}
	fmt.Println("server:", client.Handshake().ServerInfo.Name)

	wrapped, err := client.ReminderWrap(ctx, promptd.ReminderWrapParams{Key: "session.cwd", Body: "/work & play"})
	if err != nil {
		fmt.Println("wrap:", err)
		return
	}
	fmt.Println(wrapped.Text)

	_, err = client.ReminderWrap(ctx, promptd.ReminderWrapParams{Key: "not a key", Body: "x"})
	var rpcErr *promptd.Error
	if errors.As(err, &rpcErr) {
		fmt.Println("error:", rpcErr.Code, rpcErr.Kind())
	}

	fmt.Println("close:", client.Close(ctx))
	_, err = client.ReminderKeys(ctx)
	fmt.Println("closed:", errors.Is(err, promptd.ErrClosed))
	// Output:
	// server: promptd
	// <system-reminder key="session.cwd">
	// /work &amp; play
	// </system-reminder>
	// error: -32010 invalid_key
	// close: <nil>
	// closed: true
}

// Optional fields whose Go zero value would differ from promptd's default are pointers; Ptr
// makes one from a value.
func ExamplePtr() {
	params := promptd.ProvidersRegisterParams{
		Name:      "host.notes",
		Kind:      "host",
		Key:       "host.notes",
		Scope:     promptd.Ptr(promptd.ScopePerTurn),
		TimeoutMs: promptd.Ptr[int64](500),
	}
	fmt.Println(*params.Scope, *params.TimeoutMs)
	// Output: per_turn 500
}
