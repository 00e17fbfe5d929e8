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

	client, err := promptd.Start(path, promptd.Options{})
	if err != nil {
		fmt.Println("start:", err)
		return
	}
	hello, err := client.Initialize(ctx, promptd.InitializeParams{
		ClientInfo: &promptd.ClientInfo{Name: "example"},
	})
	if err != nil {
		fmt.Println("initialize:", err)
		return
	}
	fmt.Println("server:", hello.ServerInfo.Name)

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
