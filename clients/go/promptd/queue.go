package promptd

import "sync"

// noteQueue serves notifications one at a time, in arrival order, on its own goroutine, so that
// a slow event handler never holds up the reading of answers. It is unbounded because promptd's
// notifications are small, rare events; a bounded queue would have to drop them or block reads.
type noteQueue struct {
	serve func(*Request)

	mu     sync.Mutex
	items  []*Request
	closed bool
	wake   chan struct{}
}

func newNoteQueue(serve func(*Request)) *noteQueue {
	q := &noteQueue{serve: serve, wake: make(chan struct{}, 1)}
	go q.run()
	return q
}

func (q *noteQueue) push(req *Request) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, req)
	}
	q.mu.Unlock()
	q.signal()
}

// close lets the queue deliver what it already holds, then stop.
func (q *noteQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *noteQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default: // already signalled; the runner will see every item when it wakes
	}
}

func (q *noteQueue) run() {
	for range q.wake {
		for {
			q.mu.Lock()
			if len(q.items) == 0 {
				closed := q.closed
				q.mu.Unlock()
				if closed {
					return
				}
				break
			}
			next := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			q.mu.Unlock()
			q.serve(next)
		}
	}
}
