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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
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

// Subscribe to some events by name (capabilities.events), and tell them apart by Event.Method.
// A misspelt event name is refused at initialize rather than silently never delivered.
func Example_events() {
	path := os.Getenv("PROMPTD")
	if path == "" {
		path = "promptd"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	fired := make(chan promptd.GateFiredEvent, 1)
	client, err := promptd.Start(ctx, path, promptd.Options{
		Initialize: promptd.InitializeParams{
			Capabilities: &promptd.Capabilities{
				Events: promptd.BoolOrList[promptd.EventName]{List: []promptd.EventName{promptd.EventGateFired}},
			},
			Config: &promptd.Config{TodoGate: &promptd.TodoGateConfig{Enabled: promptd.Ptr(true)}},
		},
		OnEvent: func(e promptd.Event) {
			if e.Method == promptd.EventGateFired {
				fired <- e.Payload.(promptd.GateFiredEvent)
			}
		},
	})
	if err != nil {
		fmt.Println("start:", err)
		return
	}
	defer client.Close(ctx)

	gate, err := client.TodoGate(ctx, promptd.TodoGateParams{
		Session:  "s1",
		PromptID: "p1",
		Todos:    []promptd.TodoItem{{ID: "1", Content: "write the tests", Status: promptd.TodoItemStatusPending}},
	})
	if err != nil {
		fmt.Println("todo/gate:", err)
		return
	}
	fmt.Println("decision:", gate.Decision)
	e := <-fired
	fmt.Println("event:", promptd.EventGateFired, e.Session, e.PromptID, e.Fires)

	_, err = promptd.Start(ctx, path, promptd.Options{Initialize: promptd.InitializeParams{
		Capabilities: &promptd.Capabilities{Events: promptd.BoolOrList[promptd.EventName]{List: []promptd.EventName{"event/gate_fird"}}},
	}})
	var rpcErr *promptd.Error
	if errors.As(err, &rpcErr) {
		fmt.Println("misspelt:", rpcErr.Code, rpcErr.Kind())
	}
	// Output:
	// decision: nudge
	// event: event/gate_fired s1 p1 1
	// misspelt: -32602 invalid_params
}
