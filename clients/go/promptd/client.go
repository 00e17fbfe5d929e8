// Package promptd is a client for the promptd sidecar: it spawns `promptd serve` (or talks over
// any ObjectStream), correlates calls, cancels them through their context, serves the server's
// provider/produce callbacks, delivers event notifications and shuts the process down in order.
//
// The typed wrappers (methods.go) and types (types.go) are generated from protocol/openrpc.json
// by `go generate` (../internal/gen); the rest is written by hand, one concept per file:
// stream.go (line framing), conn.go (JSON-RPC correlation), errors.go, client.go
// (promptd's callbacks and events), hooks.go (the client-level hooks' runner), process.go (the
// child process, its handshake and its ordered shutdown), stderr.go (its bounded stderr tail).
//
// Import it as github.com/promptd/promptd/clients/go/promptd (see clients/go/README.md).
package promptd

//go:generate go run ../internal/gen

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
)

// Server-to-client traffic promptd sends. Its params and results (ProduceParams, ProduceResult,
// GateFiredEvent, ...) are generated from protocol/openrpc.json (`x-server-to-client`).
const (
	// ProduceMethod is the request promptd sends for a provider of kind "host" (only to a client
	// that declared capabilities.host_providers at initialize).
	ProduceMethod = "provider/produce"
	// EventPrefix starts every event notification's method name (event/gate_fired, ...).
	EventPrefix = "event/"
)

// ProduceFunc serves provider/produce. ctx ends when promptd cancels the request or the
// connection closes. Return an *Error to answer with a specific code; any other error is
// answered as an internal error (its text is not sent), and promptd skips the provider.
type ProduceFunc func(ctx context.Context, params ProduceParams) (ProduceResult, error)

// Event is an event notification (event/provider_skipped, event/gate_fired, ...).
type Event struct {
	// Method is the event's name: one of the EventName constants (e.Method == EventGateFired),
	// or an event newer than them.
	Method EventName
	// Params are the payload as it came.
	Params json.RawMessage
	// Payload is Params decoded into the event's generated type, as a value (ProviderSkippedEvent,
	// SpilledEvent, GateFiredEvent, GateExhaustedEvent, NudgeFiredEvent); nil for an event newer
	// than these types or a payload that did not decode (PayloadErr says why).
	Payload    any
	PayloadErr error
}

// Options configure a Client. The zero value is a client with no callbacks.
type Options struct {
	// Produce serves provider/produce; without it those requests are answered "method not
	// found". A panic in it is recovered: promptd is answered with an internal error (and skips
	// the provider), and the panic goes to OnError as a *PanicError.
	Produce ProduceFunc
	// OnEvent receives event notifications, one at a time and in order, on a goroutine of
	// their own (a slow OnEvent delays later events, never answers). A panic in it is recovered
	// and goes to OnError.
	OnEvent func(Event)
	// Initialize is what Start sends in the initialize handshake. Its ProtocolVersion defaults
	// to ProtocolVersion, its ClientInfo to {Name: "promptd-go"}, and its Capabilities, when nil,
	// to what the callbacks need: host_providers when Produce is set, events when OnEvent is.
	// (NewClient does not send it: call Initialize yourself.)
	Initialize InitializeParams

	// The client-level hooks. They run one at a time, in order, on a goroutine of their own, so
	// they may call the client (even Close); a panic in one is dropped.

	// OnError is told what went wrong that no call returns: a panic in Produce or OnEvent
	// (*PanicError), an answer to promptd that could not be sent.
	OnError func(error)
	// OnClose is called once when the connection closes, by Close or because promptd went
	// away, with the reason (an error matching ErrClosed).
	OnClose func(error)
	// OnExit is called once when the process Start spawned has ended and been reaped, whether
	// Close ended it or it ended by itself (then Stage is StageNone).
	OnExit func(ExitInfo)

	// Conn tunes the connection (request size limit, frame tracing).
	Conn ConnOptions
	// Process configures the spawned process (Start only).
	Process ProcessOptions
}

// Client is a connection to promptd with its callbacks, and the process when Start spawned it.
type Client struct {
	conn      *Conn
	proc      *process
	hooks     *serial
	opts      Options
	closing   atomic.Bool
	handshake InitializeResult
}

// NewClient talks to a promptd over stream (a socket, a pipe pair, an in-memory peer). It does
// not send initialize: call Initialize first.
func NewClient(stream ObjectStream, opts Options) *Client {
	c := &Client{hooks: &serial{}, opts: opts}
	h := &callbacks{produce: opts.Produce, onEvent: opts.OnEvent}
	connOpts := opts.Conn
	if opts.OnError != nil {
		own := connOpts.OnError
		connOpts.OnError = func(err error) {
			if own != nil {
				own(err)
			}
			c.hooks.do(func() { opts.OnError(err) })
		}
	}
	c.conn = NewConn(stream, h, connOpts)
	if opts.OnClose != nil {
		go func() {
			<-c.conn.Done()
			err := c.conn.Err()
			c.hooks.do(func() { opts.OnClose(err) })
		}()
	}
	return c
}

// Call sends any method with any params and decodes its result into result (see Conn.Call).
// The generated wrappers are built on it; use it directly for methods newer than the wrappers.
// Once Close has been called, and when promptd refuses a call because it has shut down, the
// error matches ErrClosed. When the process Start spawned has gone away by itself (it crashed,
// was killed), the error is an *ExitError, which matches ErrClosed too and names the exit status
// or the signal, with the last stderr lines.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	if c.closing.Load() {
		return &closedError{cause: errClosing}
	}
	if err := c.conn.Call(ctx, method, params, result); err != nil {
		return c.explain(ctx, err)
	}
	return nil
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	if c.closing.Load() {
		return &closedError{cause: errClosing}
	}
	if err := c.conn.Notify(ctx, method, params); err != nil {
		return c.explain(ctx, err)
	}
	return nil
}

// Conn is the underlying connection.
func (c *Client) Conn() *Conn { return c.conn }

// Done is closed when the connection has closed (by Close, or because promptd went away).
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// Handshake is promptd's answer to the initialize Start sent (protocol version, server info,
// methods); the zero value for a NewClient client.
func (c *Client) Handshake() InitializeResult { return c.handshake }

// callbacks routes what promptd sends to the client's functions.
type callbacks struct {
	produce ProduceFunc
	onEvent func(Event)
}

func (h *callbacks) Handle(ctx context.Context, req *Request) (any, error) {
	if req.IsNotification() {
		if h.onEvent != nil && strings.HasPrefix(req.Method, EventPrefix) {
			payload, err := decodeEvent(req.Method, req.Params)
			if err != nil {
				payload = nil
			}
			h.onEvent(Event{Method: EventName(req.Method), Params: req.Params, Payload: payload, PayloadErr: err})
		}
		return nil, nil // other notifications are for later protocol versions; ignoring them is safe
	}
	if req.Method != ProduceMethod || h.produce == nil {
		return nil, NewError(CodeMethodNotFound, "Method not found", map[string]any{"kind": ErrorKindMethodNotFound, "method": req.Method})
	}
	var params ProduceParams
	if err := json.Unmarshal(req.Params, &params); err != nil {
		return nil, NewError(CodeInvalidParams, "Invalid params", map[string]any{"kind": ErrorKindInvalidParams})
	}
	return h.produce(ctx, params)
}

// Ptr returns a pointer to v, for the optional fields of the generated params types whose Go
// zero value would differ from the server's default:
//
//	promptd.ProvidersRegisterParams{Name: "host.notes", Kind: "host", Key: "host.notes", TimeoutMs: promptd.Ptr[int64](500)}
func Ptr[T any](v T) *T { return &v }
