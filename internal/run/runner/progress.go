package runner

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/stats"
)

// progressWindow is how many recent TTFP values the live p50 is taken over.
const progressWindow = 512

// defaultProgressWidth is the width assumed when the terminal's is unknown.
const defaultProgressWidth = 80

// progressLine is the live status line on a terminal and the log lines
// written while it is shown. A status line is rewritten in place with a
// carriage return, which only works while it fits on one row; a log line
// (an interrupt notice, a warning) starts on a row of its own below it.
type progressLine struct {
	mu    sync.Mutex
	w     io.Writer
	width func() int // columns; nil or <= 0: defaultProgressWidth
	shown bool       // a status line is on the screen, without a newline
}

// columns is the terminal's width.
func (p *progressLine) columns() int {
	if p.width != nil {
		if w := p.width(); w > 0 {
			return w
		}
	}
	return defaultProgressWidth
}

// show replaces the status line with text, which fits the terminal's
// width less one column (a line that reaches the last column wraps on
// some terminals, and a wrapped line is not rewritten in place).
func (p *progressLine) show(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.w, "\r\033[K"+text)
	p.shown = true
}

// clear removes the status line.
func (p *progressLine) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// above returns log with every write moved to a row of its own below the
// status line: the status stays as it was, the log line follows, and the
// next update draws a new status line under it.
func (p *progressLine) above(log io.Writer) io.Writer {
	return writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.shown {
			fmt.Fprint(p.w, "\n")
			p.shown = false
		}
		return log.Write(b)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// progressState is what one status line shows.
type progressState struct {
	done, target      int // target 0: no count bound
	inflight, failed  int
	ttfpP50MS         float64 // < 0: no TTFP yet
	elapsed, duration time.Duration
	measuring         bool // the measured phase began
}

// text is the status line in at most width-1 columns. Its parts are
// left out, least telling first (in flight, TTFP, errors), rather than cut
// in the middle: the count and the time stay as long as they fit.
func (s progressState) text(width int) string {
	target := "?"
	if s.target > 0 {
		target = fmt.Sprint(s.target)
	}
	p50 := "-"
	if s.ttfpP50MS >= 0 {
		p50 = fmt.Sprintf("%.0fms", s.ttfpP50MS)
	}
	var clock string
	switch {
	case !s.measuring:
		clock = "warming up"
	case s.duration > 0:
		left := max(s.duration-s.elapsed, 0)
		clock = fmt.Sprintf("%s of %s, %s left", roundSeconds(s.elapsed), roundSeconds(s.duration), roundSeconds(left))
	default:
		clock = fmt.Sprintf("%s elapsed", roundSeconds(s.elapsed))
	}
	parts := []string{
		fmt.Sprintf("%d/%s done", s.done, target),
		fmt.Sprintf("%d in flight", s.inflight),
		fmt.Sprintf("%d errors", s.failed),
		"TTFP p50 " + p50,
		clock,
	}
	line := strings.Join(parts, "  ")
	for _, drop := range []int{1, 3, 2} { // in flight, TTFP, errors
		if len(line) <= width-1 { // ASCII only: bytes are columns
			break
		}
		parts[drop] = ""
		line = strings.Join(slices.DeleteFunc(slices.Clone(parts), func(p string) bool { return p == "" }), "  ")
	}
	return line[:min(len(line), max(width-1, 0))]
}

func roundSeconds(d time.Duration) time.Duration { return d.Round(time.Second) }

// startProgress updates the status line twice a second until the returned
// stop function is called. It hooks cfg.OnBegin to time the measured
// phase (which -d bounds). Callers pass a terminal only.
func startProgress(line *progressLine, c *collector, cfg *load.Config) (stop func()) {
	var begun atomic.Int64 // UnixNano of the measured phase's start; 0 before
	onBegin := cfg.OnBegin
	cfg.OnBegin = func(late time.Duration) {
		begun.Store(time.Now().UnixNano())
		if onBegin != nil {
			onBegin(late)
		}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				line.clear()
				return
			case <-t.C:
				s := c.progress()
				s.target, s.duration = cfg.Requests, cfg.Duration
				if at := begun.Load(); at != 0 {
					s.measuring, s.elapsed = true, time.Since(time.Unix(0, at))
				}
				line.show(s.text(line.columns()))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// progress is the collector's part of the status line.
func (c *collector) progress() progressState {
	c.mu.Lock()
	s := progressState{done: c.done, inflight: c.inflight, failed: c.failed, ttfpP50MS: -1}
	recent := slices.Clone(c.ttfpMS)
	c.mu.Unlock()
	if len(recent) > 0 {
		slices.Sort(recent)
		s.ttfpP50MS = stats.Percentile(recent, 50)
	}
	return s
}
