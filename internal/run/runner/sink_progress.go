package runner

import (
	"bytes"
	"sync"

	"github.com/omnibench/omnibench/internal/run/results"
)

// collector counts the requests of concurrent jobs as they start and
// finish, for the progress line, the interrupt notice and the load
// generator's self-monitoring; as a sink it counts the measured ones done
// and failed and keeps the recent TTFPs. Its mutex is for the goroutines
// that read it while the run goes (startProgress).
type collector struct {
	noClose
	mu       sync.Mutex
	inflight int
	failed   int
	done     int
	ttfpMS   []float64 // recent TTFP values for the progress line
}

func (c *collector) started() {
	c.mu.Lock()
	c.inflight++
	c.mu.Unlock()
}

// finished counts a request as no longer in flight, as soon as its job
// hands the record over (before add has it).
func (c *collector) finished() {
	c.mu.Lock()
	c.inflight--
	c.mu.Unlock()
}

func (c *collector) add(r *results.Record, _ *bytes.Buffer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Warmup {
		return nil
	}
	c.done++
	if !r.OK() {
		c.failed++
	} else if r.HasAudio() {
		if len(c.ttfpMS) == progressWindow {
			copy(c.ttfpMS, c.ttfpMS[1:])
			c.ttfpMS = c.ttfpMS[:progressWindow-1]
		}
		c.ttfpMS = append(c.ttfpMS, r.Latency(r.TTFPS)*1000) // as the report will show it
	}
	return nil
}

// inFlight is the number of requests started and not finished.
func (c *collector) inFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inflight
}
