package runner

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/stats"
)

// progressWindow is how many recent TTFP values the live p50 is taken over.
const progressWindow = 512

// startProgress rewrites one status line on w twice a second until the
// returned stop function is called. Callers pass a terminal only.
func startProgress(w io.Writer, c *collector, cfg load.Config) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	target := "?"
	if cfg.Requests > 0 {
		target = fmt.Sprint(cfg.Requests)
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				c.mu.Lock()
				n, inflight, failed := c.done, c.inflight, c.failed
				recent := slices.Clone(c.ttfpMS)
				c.mu.Unlock()
				slices.Sort(recent)
				p50 := "-"
				if len(recent) > 0 {
					p50 = fmt.Sprintf("%.0fms", stats.Percentile(recent, 50))
				}
				fmt.Fprintf(w, "\r\033[K%d/%s done  %d in flight  %d errors  TTFP p50 %s", n, target, inflight, failed, p50)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
