package breakdown

import (
	"encoding/json"
	"maps"
	"math"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/bench/expositions"
	"github.com/omnibench/omnibench/scrape"
)

// scrapeAt is a scrape with n finished pipeline requests and the given
// KV-cache usage on stage 0 replica 0.
func scrapeAt(t *testing.T, at time.Time, n int, kv float64) Series {
	obs := make([]float64, n)
	for i := range obs {
		obs[i] = 0.4
	}
	e := newExpo().hist(famPipelineE2E, model, slowBounds, obs...)
	e.gauge(famPipelineRunning, model, float64(n%3))
	e.gauge(famStageRunning, sr(0, 0), 1).gauge(famStageWaiting, sr(0, 0), 0).gauge(famStageKVUsage, sr(0, 0), kv)
	e.stage(0, 0, obs...)
	return e.series(t, at)
}

func rateOf(p Point, name string) float64 {
	for _, r := range p.Rates {
		if r.Name == name && r.Stage == "" {
			return r.PerSecond
		}
	}
	return math.NaN()
}

func TestTimelineIntervalsAndGaps(t *testing.T) {
	tl := NewTimeline(0)
	tl.Add(scrapeAt(t, t0, 0, 0.1))
	tl.Add(scrapeAt(t, t0.Add(5*time.Second), 10, 0.5))
	tl.AddGap(t0.Add(10*time.Second), "scrape timed out after 2s")
	tl.Add(scrapeAt(t, t0.Add(15*time.Second), 30, 0.2))
	ps := tl.Points()
	if len(ps) != 3 {
		t.Fatalf("%d points, want 3: %+v", len(ps), ps)
	}
	if r := rateOf(ps[0], RatePipelineRequests); r != 2 {
		t.Errorf("first interval: %v requests/s, want 2", r)
	}
	if ps[1].Gap != "scrape timed out after 2s" || ps[1].Gaps != 1 || ps[1].Gauges != nil {
		t.Errorf("gap point %+v", ps[1])
	}
	// The interval after the gap runs from the last good scrape.
	if !ps[2].Start.Equal(t0.Add(5*time.Second)) || rateOf(ps[2], RatePipelineRequests) != 2 {
		t.Errorf("after the gap: %+v", ps[2])
	}
	if _, err := json.Marshal(ps); err != nil {
		t.Errorf("JSON: %v", err)
	}

	// The breakdown over the whole run takes its KV-cache peak and mean from
	// the points: 0.5 for 5 s, 0.2 for 10 s.
	b := Compute(scrapeAt(t, t0, 0, 0.1), scrapeAt(t, t0.Add(15*time.Second), 30, 0.2), ClientFigures{})
	b.AddTimeline(tl)
	r := b.Stages[0]
	if r.KVUsagePeak != 0.5 || !near(r.KVUsageMean, (0.5*5+0.2*10)/15) {
		t.Errorf("KV usage peak %v mean %v", r.KVUsagePeak, r.KVUsageMean)
	}
}

// A full timeline merges its points in pairs: the span is kept, the count
// stays under the cap, and rates and means are time-weighted.
func TestTimelineCapMergesPoints(t *testing.T) {
	tl := NewTimeline(4)
	for i := range 9 {
		tl.Add(scrapeAt(t, t0.Add(time.Duration(i)*time.Second), i*i, float64(i)/10))
	}
	ps := tl.Points()
	if len(ps) > 4 {
		t.Fatalf("%d points over the cap of 4", len(ps))
	}
	if !ps[0].Start.Equal(t0) || !ps[len(ps)-1].End.Equal(t0.Add(8*time.Second)) {
		t.Errorf("span %v .. %v, want the whole 8 s", ps[0].Start, ps[len(ps)-1].End)
	}
	var requests float64
	for _, p := range ps {
		requests += rateOf(p, RatePipelineRequests) * p.End.Sub(p.Start).Seconds()
	}
	if !near(requests, 64) {
		t.Errorf("rates integrate to %v requests, want 64", requests)
	}
	for _, g := range ps[0].Gauges {
		if g.Name == GaugeKVCacheUsage && (g.Peak != 0.4 || g.Last != 0.4 || !near(g.Mean, 0.25)) {
			t.Errorf("merged KV gauge %+v, want peak 0.4, last 0.4, mean 0.25", g)
		}
	}
}

// The per-replica gauges and rates of a point are what Delta's own
// per-labels sums give (Gauge, HistogramDelta, CounterDelta), summed in one
// pass per family instead of one per replica.
func TestIntervalPointSumsLikeDelta(t *testing.T) {
	texts, err := expositions.Texts(t.Context(), expositions.Topology{Stages: 3, Replicas: 3}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var series [2]Series
	for i, text := range texts {
		if series[i], err = FromSnapshot(&scrape.Snapshot{ContentType: "text/plain; version=0.0.4", Body: text,
			FetchedAt: t0.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	p := intervalPoint(series[0], series[1])
	d := scrape.Diff(series[0].families, series[1].families)
	want := map[string]float64{}
	for _, v := range labelled(d, famStageRunning, labelStage, labelReplica) {
		m := map[string]string{labelStage: v[0], labelReplica: v[1]}
		for name, family := range map[string]string{GaugeStageRunning: famStageRunning, GaugeStageWaiting: famStageWaiting, GaugeKVCacheUsage: famStageKVUsage} {
			g, _ := d.Gauge(family, m)
			want[name+"/"+v[0]+"/"+v[1]] = g.After
		}
		h, _ := d.HistogramDelta(famStageE2E, m)
		want[RateStageRequests+"/"+v[0]+"/"+v[1]] = h.Count
		tok, _ := d.CounterDelta(famStageGenTokens, m)
		want[RateStageTokens+"/"+v[0]+"/"+v[1]] = tok
	}
	got := map[string]float64{}
	for _, g := range p.Gauges {
		if g.Stage != "" {
			got[g.Name+"/"+g.Stage+"/"+g.Replica] = g.Last
		}
	}
	for _, r := range p.Rates {
		if r.Stage != "" {
			got[r.Name+"/"+r.Stage+"/"+r.Replica] = r.PerSecond // over one second
		}
	}
	if len(want) != 5*9 || !maps.Equal(got, want) {
		t.Fatalf("per replica:\n%v\nwant (%d)\n%v", got, len(want), want)
	}
}

// A point costs what the families it reads cost: the families a Series
// keeps for Compute alone (the stage latency histograms, the transfers)
// add no allocation to an interval scrape.
func TestIntervalPointAllocatesOnlyForWhatItReads(t *testing.T) {
	texts, err := expositions.Texts(t.Context(), expositions.Topology{Stages: 3, Replicas: 3}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var full, read [2]Series
	for i, text := range texts {
		if full[i], err = FromSnapshot(&scrape.Snapshot{ContentType: "text/plain; version=0.0.4", Body: text,
			FetchedAt: t0.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
		read[i] = Series{At: full[i].At, families: scrape.Families{}}
		for _, name := range pointFamilies() {
			f, ok := full[i].families[name]
			if !ok {
				t.Fatalf("the exposition has no %s", name)
			}
			read[i].families[name] = f
		}
	}
	if len(full[0].families) <= len(read[0].families) {
		t.Fatalf("the full series has %d families, no more than the %d a point reads",
			len(full[0].families), len(read[0].families))
	}
	allocs := func(s [2]Series) float64 {
		return testing.AllocsPerRun(20, func() { intervalPoint(s[0], s[1]) })
	}
	// A tenth of slack: the two differ by an allocation or two between
	// runs (the race detector, map growth), where diffing every family
	// took 640 against 259.
	if got, want := allocs(full), allocs(read); got > want*1.1 {
		t.Errorf("a point of the full series makes %.0f allocations, of its families only %.0f", got, want)
	}
}
