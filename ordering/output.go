package ordering

import "io"

// outputBufferSize is the size of each of the merge's output buffers: big
// writes, few system calls (1.6 GB of output is 1,600 writes).
const outputBufferSize = 1 << 20

// outputBuffers is how many buffers go round: one being filled, the others
// being written or waiting to be.
const outputBuffers = 3

// output writes the merged records to w on a goroutine of its own, so that
// the merge goes on while a buffer is being written. A write error stops
// the writing; it is returned by the next append that needs a buffer, and
// by close.
type output struct {
	buf  []byte
	full chan []byte   // buffers to write
	free chan outcome  // buffers written, with the error if any
	done chan struct{} // closed when the goroutine has written all it got
	err  error         // the first write error, once known to the merge
}

// outcome is a buffer given back by the writing goroutine.
type outcome struct {
	buf []byte
	err error
}

func newOutput(w io.Writer) *output {
	o := &output{
		buf:  make([]byte, 0, outputBufferSize),
		full: make(chan []byte, outputBuffers),
		free: make(chan outcome, outputBuffers),
		done: make(chan struct{}),
	}
	for range outputBuffers - 1 {
		o.free <- outcome{buf: make([]byte, 0, outputBufferSize)}
	}
	go o.write(w)
	return o
}

// write is the writing goroutine.
func (o *output) write(w io.Writer) {
	defer close(o.done)
	var err error
	for buf := range o.full {
		if err == nil {
			_, err = w.Write(buf)
		}
		o.free <- outcome{buf: buf[:0], err: err}
	}
}

// appendLine adds rec and a line feed to the output.
func (o *output) appendLine(rec []byte) error {
	if len(o.buf)+len(rec)+1 > cap(o.buf) {
		if err := o.flush(); err != nil {
			return err
		}
	}
	o.buf = append(o.buf, rec...)
	o.buf = append(o.buf, '\n')
	return nil
}

// flush hands the current buffer to the writing goroutine and takes the
// next free one.
func (o *output) flush() error {
	if o.err != nil {
		return o.err
	}
	if len(o.buf) == 0 {
		return nil
	}
	o.full <- o.buf
	next := <-o.free
	if next.err != nil {
		o.err = &WriteError{Err: next.err}
		return o.err
	}
	o.buf = next.buf
	if cap(o.buf) > 4*outputBufferSize { // grown for a long record
		o.buf = make([]byte, 0, outputBufferSize)
	}
	return nil
}

// close writes what is buffered, waits until everything is written, and
// returns the first write error.
func (o *output) close() error {
	if len(o.buf) > 0 && o.err == nil {
		o.full <- o.buf
		o.buf = nil
	}
	close(o.full)
	<-o.done
	for len(o.free) > 0 {
		if r := <-o.free; r.err != nil && o.err == nil {
			o.err = &WriteError{Err: r.err}
		}
	}
	return o.err
}
