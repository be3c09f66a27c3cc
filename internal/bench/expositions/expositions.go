// Package expositions produces the simulator's /metrics expositions at a
// given topology, after enough traffic that every stage and replica has
// recorded samples. Parser benchmarks and equality tests use them as a
// realistic, reproducible input at the sizes of real deployments.
package expositions

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/omnibench/omnibench/internal/simulator"
)

// Topology is a uniform deployment: Stages stages of Replicas replicas each.
type Topology struct {
	Stages, Replicas int
}

// String is the topology as the issue and the docs write it, "16x32".
func (t Topology) String() string { return fmt.Sprintf("%dx%d", t.Stages, t.Replicas) }

// Sizes are the topologies the scrape benchmarks measure: the default
// three-stage pipeline at two replicas, and two large deployments.
var Sizes = []Topology{{3, 2}, {8, 16}, {16, 32}}

// requestTimeout bounds each request and the scrape; the simulator's
// timing below makes each request a few milliseconds of work.
const requestTimeout = time.Minute

// Text starts a simulator with stats on at topology t, sends chat requests
// with short replies until every replica of every stage has served one
// (replicas are picked round robin), and returns the text exposition of
// its /metrics.
func Text(ctx context.Context, t Topology) ([]byte, error) {
	texts, err := Texts(ctx, t, 1)
	if err != nil {
		return nil, err
	}
	return texts[0], nil
}

// Texts is Text repeated on one simulator: the exposition after each of
// rounds rounds of one request per replica. They have the same lines but
// for their values, as the scrapes of one server during a run.
func Texts(ctx context.Context, t Topology, rounds int) ([][]byte, error) {
	cfg := simulator.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.StatsEnabled = true
	cfg.Topology = slices.Repeat([]int{t.Replicas}, t.Stages)
	cfg.Timing = simulator.Timing{
		TTFT: time.Millisecond, WordInterval: time.Millisecond, TTFA: time.Millisecond,
		ChunkAudio: 100 * time.Millisecond, MinAudio: 100 * time.Millisecond, MaxAudio: 200 * time.Millisecond,
	}
	run, err := simulator.Start(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("expositions %s: %w", t, err)
	}
	defer run.Close()
	client := &http.Client{Timeout: requestTimeout}
	body := `{"messages":[{"role":"user","content":"Say hi."}],"stream":true}`
	var texts [][]byte
	for round := range rounds {
		for i := range t.Replicas {
			if err := drain(ctx, client, http.MethodPost, run.URL+"/v1/chat/completions", body); err != nil {
				return nil, fmt.Errorf("expositions %s: round %d, request %d: %w", t, round+1, i+1, err)
			}
		}
		text, err := get(ctx, client, run.URL+"/metrics")
		if err != nil {
			return nil, fmt.Errorf("expositions %s: scrape %d: %w", t, round+1, err)
		}
		texts = append(texts, text)
	}
	return texts, nil
}

func drain(ctx context.Context, client *http.Client, method, url, body string) error {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

func get(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	const maxBytes = 1 << 30
	return io.ReadAll(io.LimitReader(resp.Body, maxBytes))
}
