package promptd

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The error codes (CodeParseError, CodeUnknownProvider, ...) and kinds (ErrorKind) are generated
// from protocol/openrpc.json into types.go. Application errors use -32000..-32099 and say what
// went wrong in data.kind; compare kinds (Error.Kind), not messages, which may change.

// Error is an error response from the peer: the server's answer to a call, or the answer this
// client gives to a server-to-client request.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if kind := e.Kind(); kind != "" {
		return fmt.Sprintf("promptd: %s (code %d, kind %s)", e.Message, e.Code, kind)
	}
	return fmt.Sprintf("promptd: %s (code %d)", e.Message, e.Code)
}

// Kind returns data.kind, the machine-readable reason (one of the ErrorKind constants, or a kind
// newer than them), or "" when the error has none.
func (e *Error) Kind() ErrorKind {
	var data struct {
		Kind ErrorKind `json:"kind"`
	}
	if len(e.Data) == 0 || json.Unmarshal(e.Data, &data) != nil {
		return ""
	}
	return data.Kind
}

// NewError builds an error for a handler to return; data is marshalled as the error's data
// (nil for none). A handler's plain error is answered as an internal error instead, so that its
// text never reaches the server.
func NewError(code int64, message string, data any) *Error {
	e := &Error{Code: code, Message: message}
	if data != nil {
		raw, err := json.Marshal(data)
		if err == nil {
			e.Data = raw
		}
	}
	return e
}

// ErrClosed is returned (wrapped, check it with errors.Is) by calls made on, or pending on, a
// connection that has been closed or whose peer has gone away. The wrapped error, when there is
// one, says why (errors.Unwrap or the error text).
var ErrClosed = errors.New("promptd: connection closed")

// ErrMessageTooLarge is returned by a call whose encoded request is over the connection's
// MaxMessageBytes: the server would answer it with an error carrying a null id, which no call
// can be matched with, so the request is refused before it is sent.
var ErrMessageTooLarge = errors.New("promptd: message too large")

// closedError is ErrClosed with the reason the connection ended.
type closedError struct{ cause error }

func (e *closedError) Error() string {
	if e.cause == nil {
		return ErrClosed.Error()
	}
	return ErrClosed.Error() + ": " + e.cause.Error()
}

func (e *closedError) Is(target error) bool { return target == ErrClosed }

func (e *closedError) Unwrap() error { return e.cause }

// errServerShutDown is the reason given for a call promptd refused because it has shut down.
var errServerShutDown = errors.New("the server has shut down (code -32002)")

// errClosedByClient is the reason given once Conn.Close has closed the connection.
var errClosedByClient = errors.New("closed by the client")

// errClosing is the reason given for a call made while Close is under way.
var errClosing = errors.New("Close has been called")

// PanicError is what a handler's panic becomes: promptd is answered with an internal error (for
// provider/produce it then skips the provider), the host keeps running, and the PanicError goes
// to Options.OnError (ConnOptions.OnError).
type PanicError struct {
	// Method is the request or notification being served.
	Method string
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("promptd: the %s handler panicked: %v", e.Method, e.Value)
}

// ProtocolVersionError is Start's error when promptd answers initialize with a protocol version
// other than the one the client asked for (promptd answers its own when it does not speak the
// one asked for).
type ProtocolVersionError struct {
	Client string // the version asked for (ProtocolVersion unless Options.Initialize says otherwise)
	Server string // the version promptd answered with
}

func (e *ProtocolVersionError) Error() string {
	return fmt.Sprintf("promptd: protocol version mismatch: the client speaks %s, the server %s", e.Client, e.Server)
}
