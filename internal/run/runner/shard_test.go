package runner

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/load"
)

// A shard waiting for an agreed start writes its header, with how late it
// began, before every record, including the warm-up finished before the
// start; a shard other than 0 does not scrape, and says why.
func TestRunShardWithStartAt(t *testing.T) {
	t.Parallel()
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	cfg := baseConfig(sim.URL, wl, 6, 2)
	cfg.Load.Warmup = 2
	cfg.Load.Shard = load.Shard{Index: 1, Count: 2}
	startAt := time.Now().Add(300 * time.Millisecond)
	cfg.Load.StartAt = startAt
	var out bytes.Buffer
	cfg.Out = &out
	ctx, cancel := context.WithTimeout(context.Background(), runGuard)
	defer cancel()
	o, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}

	h, recs, err := results.Read(&out) // also: the header comes first
	if err != nil {
		t.Fatal(err)
	}
	if h.ShardIndex != 1 || h.ShardCount != 2 || h.Warmup != 2 || h.StartAt != startAt.UTC().Format(time.RFC3339Nano) {
		t.Errorf("header %+v", h)
	}
	if h.StartLateS != o.Load.StartLate.Seconds() || h.StartLateS < 0 {
		t.Errorf("header start_late_s %v, load %v", h.StartLateS, o.Load.StartLate)
	}
	var warm, measured []int
	for _, r := range recs {
		if r.Warmup {
			warm = append(warm, r.Seq)
		} else {
			measured = append(measured, r.Seq)
		}
	}
	// Shard 1 of 2 runs half of the 6 measured requests: the test's
	// numbers 2 + 1, 2 + 3, 2 + 5 (warm-up 2 first).
	if len(warm) != 2 || len(measured) != 3 {
		t.Fatalf("warm-up %v, measured %v", warm, measured)
	}
	for _, s := range measured {
		if (s-2)%2 != 1 {
			t.Errorf("measured seq %d is not shard 1's", s)
		}
	}
	if o.Before != nil || !strings.Contains(o.ScrapeNote, "shard 1/2 does not scrape") {
		t.Errorf("shard 1 scraped (%v), note %q", o.Before != nil, o.ScrapeNote)
	}
}
