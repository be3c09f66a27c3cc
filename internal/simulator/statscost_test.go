package simulator

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestStatsCostOnlyWithStatsOn checks that Config.StatsCost lengthens a
// request when stats are on and costs nothing when they are off. Both
// checks are bounds the cost itself guarantees: a request with stats on
// cannot end before its cost has been spent, and with stats off a cost of
// an hour would outlast the minute the request is given.
func TestStatsCostOnlyWithStatsOn(t *testing.T) {
	const cost = 500 * time.Millisecond
	on := testConfig()
	on.StatsCost = cost
	start := time.Now()
	st := doChat(t, startSim(t, on), chatReq("hello there", nil))
	if elapsed := time.Since(start); elapsed < cost {
		t.Errorf("stats on: the request took %v, less than its stats cost %v", elapsed, cost)
	}
	if !st.done || len(st.audio) == 0 {
		t.Errorf("stats on: the stream did not complete with audio (done %v, %d audio events, read error %v)", st.done, len(st.audio), st.readErr)
	}

	off := testConfig()
	off.StatsEnabled = false
	off.StatsCost = time.Hour
	run := startSim(t, off)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	resp := post(t, ctx, run.URL+"/v1/chat/completions", chatReq("hello there", nil))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stats off: status %d", resp.StatusCode)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("stats off: the response did not end within a minute, so the stats cost was spent: %v", err)
	}
}

func TestStatsCostNegativeRejected(t *testing.T) {
	cfg := testConfig()
	cfg.StatsCost = -time.Millisecond
	if _, err := New(cfg); err == nil {
		t.Fatal("New accepted a negative StatsCost")
	}
}
