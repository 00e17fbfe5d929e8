package promptd

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Host providers against the real server: promptd calls back into the client (provider/produce)
// while it assembles a reminder.

// startWithHostProviders spawns promptd with the host_providers capability and events on, and
// skips the test when the server does not have the methods it needs yet.
func startWithHostProviders(t *testing.T, opts Options) *Client {
	t.Helper()
	opts.Initialize = InitializeParams{
		ClientInfo:   &ClientInfo{Name: "promptd-go-tests"},
		Capabilities: &Capabilities{HostProviders: true, Events: BoolOrList[EventName]{All: true}},
	}
	client := startSidecar(t, opts)
	for _, m := range []string{"providers/register", "reminder/assemble"} {
		if !slices.Contains(client.Handshake().Methods, m) {
			t.Skipf("the server does not serve %s yet", m)
		}
	}
	return client
}

func registerHost(t *testing.T, client *Client, name string, timeoutMS int64) {
	t.Helper()
	err := client.ProvidersRegister(testContext(t), ProvidersRegisterParams{
		Name: name, Kind: "host", Key: name, Scope: Ptr(ScopePerTurn), TimeoutMs: Ptr(timeoutMS),
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAHostProviderIsServedThroughProduceWhileAReminderIsAssembled(t *testing.T) {
	var mu sync.Mutex
	var seen []ProduceParams
	client := startWithHostProviders(t, Options{Produce: func(_ context.Context, p ProduceParams) (ProduceResult, error) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
		return ProduceResult{Text: Ptr("note from " + p.Provider)}, nil
	}})
	registerHost(t, client, "host.notes", 5000)
	res, err := client.ReminderAssemble(testContext(t), ReminderAssembleParams{Session: "s1", UserMessage: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "note from host.notes") {
		t.Fatalf("the produced text is not in the reminder: %q", res.Text)
	}
	i := slices.IndexFunc(res.Fragments, func(f FragmentReport) bool { return f.Provider == "host.notes" })
	if i < 0 || res.Fragments[i].Status != "delivered" {
		t.Fatalf("fragments: %+v", res.Fragments)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0].Provider != "host.notes" || seen[0].Session != "s1" || seen[0].UserMessage != "hello" {
		t.Fatalf("produce saw %+v", seen)
	}
}

func TestAHostProviderThatNeverAnswersIsSkippedCancelledAndTheEventSaysSo(t *testing.T) {
	events := make(chan Event, 8)
	gaveUp := make(chan struct{})
	client := startWithHostProviders(t, Options{
		Produce: func(ctx context.Context, _ ProduceParams) (ProduceResult, error) {
			<-ctx.Done() // silent until promptd cancels the request (or the connection closes)
			close(gaveUp)
			return ProduceResult{}, ctx.Err()
		},
		OnEvent: func(e Event) { events <- e },
	})
	registerHost(t, client, "host.silent", 200)
	res, err := client.ReminderAssemble(testContext(t), ReminderAssembleParams{Session: "s1", UserMessage: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Provider != "host.silent" || res.Skipped[0].Reason != "timeout" {
		t.Fatalf("skipped: %+v", res.Skipped)
	}
	select {
	case e := <-events:
		var p struct{ Provider, Reason string }
		if e.Method != "event/provider_skipped" || json.Unmarshal(e.Params, &p) != nil || p.Provider != "host.silent" {
			t.Fatalf("event %s %s", e.Method, e.Params)
		}
	case <-time.After(patience):
		t.Fatal("no event/provider_skipped arrived")
	}
	// promptd sends $/cancelRequest when it stops waiting; the handler's context ends then,
	// while the connection is still open.
	select {
	case <-gaveUp:
	case <-time.After(patience):
		t.Fatal("the produce handler's context was not cancelled")
	}
	if client.conn.Err() != nil {
		t.Fatal("the connection closed instead")
	}
}

func TestACallTheServerIsStillWorkingOnCanBeCancelledOrTimedOut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration // 0: cancelled by hand once promptd is waiting on the provider
		want    error
	}{
		{"cancelled", 0, context.Canceled},
		{"timed out", 300 * time.Millisecond, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec recorder
			waiting := make(chan struct{}, 1)
			client := startWithHostProviders(t, Options{
				Conn: ConnOptions{Trace: rec.trace},
				Produce: func(ctx context.Context, _ ProduceParams) (ProduceResult, error) {
					waiting <- struct{}{}
					<-ctx.Done()
					return ProduceResult{}, ctx.Err()
				},
			})
			// Far longer than the call is given: only the cancellation can end it early.
			registerHost(t, client, "host.slow", 30000)
			ctx, cancel := context.WithCancel(context.Background())
			if tc.timeout > 0 {
				ctx, cancel = context.WithTimeout(context.Background(), tc.timeout)
			}
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := client.ReminderAssemble(ctx, ReminderAssembleParams{Session: "s1", UserMessage: "hi"})
				done <- err
			}()
			<-waiting
			if tc.timeout == 0 {
				cancel()
			}
			if err := waitErr(t, done); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			// promptd answers the cancelled request -32800; the client has already let it go.
			var assembleID json.RawMessage
			waitFor(t, "the -32800 answer", func() bool {
				for _, f := range rec.snapshot() {
					if f.dir == Sent && f.msg.Method == "reminder/assemble" {
						assembleID = f.msg.ID
					}
					if f.dir == Received && assembleID != nil && string(f.msg.ID) == string(assembleID) {
						return f.msg.Error != nil && f.msg.Error.Code == CodeRequestCancelled && f.msg.Error.Kind() == "cancelled"
					}
				}
				return false
			})
			cancelled := slices.ContainsFunc(rec.snapshot(), func(f tracedFrame) bool {
				var p struct{ ID json.RawMessage }
				return f.dir == Sent && f.msg.Method == CancelMethod && json.Unmarshal(f.msg.Params, &p) == nil && string(p.ID) == string(assembleID)
			})
			if !cancelled {
				t.Fatal("no $/cancelRequest naming the call was sent")
			}
			if _, err := client.ReminderKeys(testContext(t)); err != nil {
				t.Fatalf("the connection did not survive the cancellation: %v", err)
			}
		})
	}
}
