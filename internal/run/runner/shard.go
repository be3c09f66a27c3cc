package runner

import (
	"fmt"
	"sync"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
)

// headerGate writes the results file. When the run waits for an agreed
// start (load.Config.StartAt), the header can only be complete once the
// measured phase has begun (it records how late this process was), so the
// header and the warm-up records that finished before it are held until
// open; otherwise it writes through.
type headerGate struct {
	w *results.Writer

	mu      sync.Mutex
	held    bool
	header  results.Header
	pending []results.Record
	scrapes []results.Scrape // held like pending, written before them
	opened  bool
}

func newHeaderGate(w *results.Writer, waitForStart bool) *headerGate {
	return &headerGate{w: w, held: waitForStart}
}

// WriteHeader writes h, or keeps it for open when the gate is held.
func (g *headerGate) WriteHeader(h results.Header) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held {
		g.header = h
		return nil
	}
	g.opened = true
	return g.w.WriteHeader(h)
}

// Write writes one record, or keeps it until open.
func (g *headerGate) Write(r *results.Record) error {
	g.mu.Lock()
	if !g.opened {
		g.pending = append(g.pending, *r)
		g.mu.Unlock()
		return nil
	}
	g.mu.Unlock()
	return g.w.Write(r)
}

// WriteScrape writes one scrape line, or keeps it until open.
func (g *headerGate) WriteScrape(sc results.Scrape) error {
	g.mu.Lock()
	if !g.opened {
		g.scrapes = append(g.scrapes, sc)
		g.mu.Unlock()
		return nil
	}
	g.mu.Unlock()
	return g.w.WriteScrape(sc)
}

// open writes the header as it is now and the records held so far; later
// calls do nothing. Records written after it go straight through.
func (g *headerGate) open(h results.Header) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened {
		return nil
	}
	g.opened = true
	if err := g.w.WriteHeader(h); err != nil {
		return err
	}
	for _, sc := range g.scrapes {
		if err := g.w.WriteScrape(sc); err != nil {
			return err
		}
	}
	g.scrapes = nil
	for i := range g.pending {
		if err := g.w.Write(&g.pending[i]); err != nil {
			return err
		}
	}
	g.pending = nil
	return nil
}

// shardHeader fills the header fields of a shard and of an agreed start.
func shardHeader(h *results.Header, cfg Config) {
	h.Warmup = cfg.Load.Warmup
	if s := cfg.Load.Shard; s.Count > 0 {
		h.ShardIndex, h.ShardCount = s.Index, s.Count
	}
	if !cfg.Load.StartAt.IsZero() {
		h.StartAt = cfg.Load.StartAt.UTC().Format(time.RFC3339Nano)
	}
}

// shardScrapeNote is why this process does not scrape the server ("" when
// it does): of the shards of one test, only shard 0 scrapes, so that the
// server's deltas are taken once over the whole test.
func shardScrapeNote(cfg Config) string {
	if s := cfg.Load.Shard; s.Sharded() && s.Index != 0 {
		return fmt.Sprintf("shard %s does not scrape the server: shard 0 of the %d takes the before and after snapshots", s, s.Count)
	}
	return ""
}

// announceStart tells the log when the measured phase of a run with an
// agreed start begins, so a wait of minutes is not mistaken for a hang.
func announceStart(cfg Config) {
	at := cfg.Load.StartAt
	if at.IsZero() {
		return
	}
	who := "the run"
	if s := cfg.Load.Shard; s.Count > 0 {
		who = "shard " + s.String()
	}
	if wait := time.Until(at); wait > 0 {
		fmt.Fprintf(cfg.Log, "omnibench: %s measures from %s (in %v, after its warm-up)\n", who, at.UTC().Format(time.RFC3339Nano), wait.Round(time.Millisecond))
	} else {
		fmt.Fprintf(cfg.Log, "omnibench: %s starts %v after the agreed start %s: its first arrivals are late by that much\n", who, (-wait).Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
	}
}
