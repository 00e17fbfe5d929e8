package promptd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ObjectStream carries whole JSON values between the two peers. Conn uses one; LineStream is the
// framing promptd speaks. WriteObject may be called from several goroutines at once; ReadObject
// only from one.
type ObjectStream interface {
	// WriteObject sends one encoded JSON value (without a trailing newline).
	WriteObject(frame []byte) error
	// ReadObject returns the next JSON value's bytes, or an error when the stream has ended.
	ReadObject() ([]byte, error)
	// Close ends the stream in both directions and unblocks a pending ReadObject.
	Close() error
}

// LineStream is the framing of promptd's wire: one JSON value per line, "\n"-terminated, with a
// trailing "\r" tolerated and blank lines skipped.
type LineStream struct {
	r       *bufio.Reader
	in      io.Reader
	out     io.Writer
	maxLine int

	wmu sync.Mutex // one frame is written whole before the next one starts
	buf []byte
}

// readBuffer is large enough that a typical frame is one ReadSlice, small enough to be cheap
// per connection.
const readBuffer = 64 << 10

// NewLineStream frames JSON values over in (frames from the peer) and out (frames to the peer).
// A line longer than maxLine bytes ends the stream with an error (0 means no limit). Close closes
// out and in when they are io.Closers.
func NewLineStream(in io.Reader, out io.Writer, maxLine int) *LineStream {
	return &LineStream{r: bufio.NewReaderSize(in, readBuffer), in: in, out: out, maxLine: maxLine}
}

// WriteObject writes frame and its newline in one Write, so that concurrent writers never
// interleave and a reader never sees half a frame followed by another frame.
func (s *LineStream) WriteObject(frame []byte) error {
	if bytes.IndexByte(frame, '\n') >= 0 {
		// encoding/json never emits a raw newline; a caller-built frame with one would split
		// into two broken lines on the wire.
		return errors.New("promptd: a frame must not contain a newline")
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.buf = append(append(s.buf[:0], frame...), '\n')
	_, err := s.out.Write(s.buf)
	if cap(s.buf) > readBuffer {
		s.buf = nil // do not keep one huge frame's buffer alive for the connection's lifetime
	}
	return err
}

// ReadObject returns the next non-blank line without its line ending.
func (s *LineStream) ReadObject() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if s.maxLine > 0 && len(line)+len(chunk) > s.maxLine+2 { // +2: the "\r\n" is not content
			return nil, fmt.Errorf("%w: a line from the peer is over %d bytes", ErrMessageTooLarge, s.maxLine)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (!errors.Is(err, io.EOF) || len(bytes.TrimSpace(line)) == 0) {
			return nil, err
		}
		// A final line without its newline is still a frame: the peer's last word before EOF.
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			line = line[:0]
			continue
		}
		return line, nil
	}
}

// Close closes both directions. Closing the peer's input is what tells promptd that no more
// requests are coming (stdin EOF); closing our input unblocks a reader waiting in ReadObject.
func (s *LineStream) Close() error {
	var errs []error
	if c, ok := s.out.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	if c, ok := s.in.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
