package view

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"
)

// Progress returns where a program's progress line ("\r...", redrawn in place) goes: f itself
// when f is a terminal, otherwise a LineProgress that writes the line at most once every so often.
func Progress(f *os.File, every time.Duration) io.Writer {
	if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice == 0 {
		return &LineProgress{W: f, Every: every} // a log or a pipe, not a terminal
	}
	return f
}

// LineProgress writes the progress line, which a terminal redraws in place ("\r..."), as a line of
// its own at most once every Every, for output sent to a file or a pipe, where redrawing would
// pile up a line every half second. Other writes pass through, after the last frame if it was
// skipped (the state the work ended in), and less the newline that ends a frame on a terminal,
// which a frame written as a line already has. It is not safe for concurrent use: one goroutine
// draws the progress.
type LineProgress struct {
	W          io.Writer
	Every      time.Duration
	last       time.Time
	pending    []byte // the last frame, when it was skipped
	afterFrame bool   // the last write was a frame
}

func (p *LineProgress) Write(b []byte) (int, error) {
	line, ok := bytes.CutPrefix(b, []byte("\r"))
	if !ok {
		if p.afterFrame {
			p.afterFrame = false
			if p.pending != nil {
				if _, err := fmt.Fprintf(p.W, "%s\n", p.pending); err != nil {
					return 0, err
				}
				p.pending = nil
			}
			if rest, cut := bytes.CutPrefix(b, []byte("\n")); cut {
				if _, err := p.W.Write(rest); err != nil {
					return 0, err
				}
				return len(b), nil
			}
		}
		return p.W.Write(b)
	}
	p.afterFrame = true
	line = bytes.TrimRight(line, " ")
	if now := time.Now(); now.Sub(p.last) >= p.Every {
		p.last, p.pending = now, nil
		if _, err := fmt.Fprintf(p.W, "%s\n", line); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	p.pending = append(p.pending[:0], line...)
	return len(b), nil
}
