package promptd

import "sync"

// serial runs functions one at a time, in the order they were queued, on a goroutine that exists
// only while there is work: the client's one FIFO executor. The client's hooks (OnError, OnClose,
// OnExit) run on one, so a hook may call back into the client (even Close) without deadlocking
// it, and sees events in order; the connection's notifications run on another, so a slow event
// handler never holds up the reading of answers. It is unbounded because what it runs is small
// and rare; a bounded queue would have to drop work or block its caller.
type serial struct {
	mu      sync.Mutex
	items   []func()
	running bool
	closed  bool
}

// close refuses new work; what is already queued still runs.
func (s *serial) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

func (s *serial) do(f func()) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.items = append(s.items, f)
	if s.running {
		s.mu.Unlock()
		return
	}
	s.running = true
	s.mu.Unlock()
	go s.run()
}

func (s *serial) run() {
	for {
		s.mu.Lock()
		if len(s.items) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		f := s.items[0]
		s.items[0] = nil
		s.items = s.items[1:]
		s.mu.Unlock()
		func() {
			// A panicking hook has nowhere to be reported; it must not take the host down.
			defer func() { _ = recover() }()
			f()
		}()
	}
}
