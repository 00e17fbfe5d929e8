// Package promptd is a client for the promptd sidecar: it spawns `promptd serve` (or talks over
// any ObjectStream), correlates calls, cancels them through their context, serves the server's
// provider/produce callbacks, delivers event notifications and shuts the process down in order.
//
// The typed wrappers (methods.go) and types (types.go) are generated from protocol/openrpc.json
// by `go generate`; the rest is written by hand, one concept per file: stream.go (line framing),
// conn.go (JSON-RPC correlation), queue.go (notifications in order), errors.go, client.go
// (promptd's callbacks and events), process.go (the child process and its ordered shutdown).
package promptd

//go:generate go run ../internal/gen

import (
	"context"
	"encoding/json"
	"strings"
)

// Server-to-client traffic promptd sends.
const (
	// ProduceMethod is the request promptd sends for a provider of kind "host" (only to a client
	// that declared capabilities.host_providers at initialize).
	ProduceMethod = "provider/produce"
	// EventPrefix starts every event notification's method name (event/gate_fired, ...).
	EventPrefix = "event/"
)

// ProduceParams are the params of a provider/produce request.
type ProduceParams struct {
	Provider string `json:"provider"`
	// Session is the session the turn belongs to, or nil for none.
	Session     *string `json:"session"`
	UserMessage string  `json:"user_message"`
}

// ProduceResult is the answer to provider/produce: the fragment's text, or nil for nothing this
// turn.
type ProduceResult struct {
	Text *string `json:"text"`
}

// ProduceFunc serves provider/produce. ctx ends when promptd cancels the request or the
// connection closes. Return an *Error to answer with a specific code; any other error is
// answered as an internal error (its text is not sent), and promptd skips the provider.
type ProduceFunc func(ctx context.Context, params ProduceParams) (ProduceResult, error)

// Event is an event notification (event/provider_skipped, event/gate_fired, ...).
type Event struct {
	Method string
	Params json.RawMessage
}

// Options configure a Client. The zero value is a client with no callbacks.
type Options struct {
	// Produce serves provider/produce; without it those requests are answered "method not
	// found". Declare capabilities.host_providers at initialize for promptd to send them.
	Produce ProduceFunc
	// OnEvent receives event notifications, one at a time and in order, on a goroutine of
	// their own (a slow OnEvent delays later events, never answers). Subscribe with
	// capabilities.events at initialize.
	OnEvent func(Event)
	// Conn tunes the connection (request size limit, frame tracing).
	Conn ConnOptions
	// Process configures the spawned process (Start only).
	Process ProcessOptions
}

// Client is a connection to promptd with its callbacks, and the process when Start spawned it.
type Client struct {
	conn *Conn
	proc *process
}

// NewClient talks to a promptd over stream (a socket, a pipe pair, an in-memory peer).
func NewClient(stream ObjectStream, opts Options) *Client {
	h := &callbacks{produce: opts.Produce, onEvent: opts.OnEvent}
	return &Client{conn: NewConn(stream, h, opts.Conn)}
}

// Call sends any method with any params and decodes its result into result (see Conn.Call).
// The generated wrappers are built on it; use it directly for methods newer than the wrappers.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	return c.conn.Call(ctx, method, params, result)
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	return c.conn.Notify(ctx, method, params)
}

// Conn is the underlying connection.
func (c *Client) Conn() *Conn { return c.conn }

// Done is closed when the connection has closed (by Close, or because promptd went away).
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// callbacks routes what promptd sends to the client's functions.
type callbacks struct {
	produce ProduceFunc
	onEvent func(Event)
}

func (h *callbacks) Handle(ctx context.Context, req *Request) (any, error) {
	if req.IsNotification() {
		if h.onEvent != nil && strings.HasPrefix(req.Method, EventPrefix) {
			h.onEvent(Event{Method: req.Method, Params: req.Params})
		}
		return nil, nil // other notifications are for later protocol versions; ignoring them is safe
	}
	if req.Method != ProduceMethod || h.produce == nil {
		return nil, NewError(CodeMethodNotFound, "Method not found", map[string]string{"kind": "method_not_found", "method": req.Method})
	}
	var params ProduceParams
	if err := json.Unmarshal(req.Params, &params); err != nil {
		return nil, NewError(CodeInvalidParams, "Invalid params", map[string]string{"kind": "invalid_params"})
	}
	return h.produce(ctx, params)
}

// Ptr returns a pointer to v, for the optional fields of the generated params types:
// ReminderWrapParams{Key: "k", Body: "b", Nonce: promptd.Ptr(true)}.
func Ptr[T any](v T) *T { return &v }
