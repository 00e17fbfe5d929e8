package promptd

import (
	"context"
	"encoding/json"
	"io"
	"testing"
)

// Benchmarks, against the real sidecar ($PROMPTD) unless they say otherwise:
//
//	go test -run '^$' -bench RoundTrip -benchtime 5000x
//	go test -run '^$' -bench Start -benchtime 10x  (each iteration spawns a process)

func BenchmarkSequentialRoundTrip(b *testing.B) {
	client := benchClient(b)
	ctx := context.Background()
	params := ReminderWrapParams{Key: "session.cwd", Body: "/work"}
	for b.Loop() {
		if _, err := client.ReminderWrap(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConcurrentRoundTrips(b *testing.B) {
	client := benchClient(b)
	ctx := context.Background()
	params := ReminderWrapParams{Key: "session.cwd", Body: "/work"}
	b.SetParallelism(16) // many callers sharing one connection, as a busy host would
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := client.ReminderWrap(ctx, params); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkStartToFirstAnswerAndClose(b *testing.B) {
	path := sidecar(b)
	ctx := context.Background()
	for b.Loop() {
		client, err := Start(ctx, path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := client.ReminderWrap(ctx, ReminderWrapParams{Key: "k", Body: "b"}); err != nil {
			b.Fatal(err)
		}
		if err := client.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func benchClient(b *testing.B) *Client {
	client, err := Start(context.Background(), sidecar(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close(context.Background()) })
	return client
}

// The client's own cost per call, against an in-memory peer that answers at once.
func BenchmarkInMemoryRoundTrip(b *testing.B) {
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	client := NewClient(NewLineStream(toClientR, toServerW, 0), Options{})
	defer client.Close(context.Background())
	peer := NewLineStream(toServerR, toClientW, 0)
	defer peer.Close()
	go func() {
		for {
			frame, err := peer.ReadObject()
			if err != nil {
				return
			}
			var req message
			if json.Unmarshal(frame, &req) != nil {
				return
			}
			if peer.WriteObject([]byte(`{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"text":"ok"}}`)) != nil {
				return
			}
		}
	}()
	ctx := context.Background()
	params := ReminderWrapParams{Key: "session.cwd", Body: "/work"}
	for b.Loop() {
		if _, err := client.ReminderWrap(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}
