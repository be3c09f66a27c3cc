package abtest

import (
	"runtime"
	"slices"

	"github.com/omnibench/omnibench/internal/experiment/compare"
	"github.com/omnibench/omnibench/internal/run/offheap"
	"github.com/omnibench/omnibench/internal/run/results"
)

// armSample is what an arm keeps of one finished request: the values of
// the compared metrics (Metrics) and what decides whether the request is a
// sample, as compare.Usable decides it. The full records go to the arm's
// results file as they complete; keeping 40 bytes instead of the record,
// outside the Go heap as a run's summary.Set keeps its samples (package
// offheap: no collector headroom over them, no slack of a growing slice),
// keeps a long A/B run's memory bounded.
type armSample struct {
	seq    int // order sent, across the arm's rounds
	values [numMetrics]float64
	has    [numMetrics]bool // the metric applies to the request (compare.Metric.Value's ok)
	warmup bool
	ramp   bool
	failed bool
}

// numMetrics is len(Metrics()).
const numMetrics = 3

// armSamples are an arm's finished requests in compact form, in the order
// they completed, and the first failure's class and message without and
// with ramp-phase requests (which --include-ramp counts).
type armSamples struct {
	store      *armStore // nil until the first request
	firstError [2]string
}

// armStore is the samples in blocks of armBlock from an arena, which it
// gives back when it is no longer reachable.
type armStore struct {
	arena  *offheap.Arena
	blocks [][]armSample // each full but the last
}

const armBlock = 4096

// append keeps x after the samples so far.
func (st *armStore) append(x armSample) {
	if n := len(st.blocks); n == 0 || len(st.blocks[n-1]) == armBlock {
		st.blocks = append(st.blocks, offheap.Make[armSample](st.arena, armBlock)[:0])
	}
	last := &st.blocks[len(st.blocks)-1]
	*last = append(*last, x)
}

// each calls f with every sample in the order kept.
func (a *armSamples) each(f func(armSample)) {
	if a.store == nil {
		return
	}
	for _, b := range a.store.blocks {
		for _, x := range b {
			f(x)
		}
	}
	runtime.KeepAlive(a.store) // the blocks are the store's arena's until here
}

// add keeps the compact form of one finished request, ms being Metrics().
func (a *armSamples) add(ms []compare.Metric, r *results.Record) {
	x := armSample{seq: r.Seq, warmup: r.Warmup, ramp: r.Phase == "ramp", failed: !r.OK()}
	for i, m := range ms {
		x.values[i], x.has[i] = m.Value(r)
	}
	if x.failed && !x.warmup {
		text := r.ErrorClass
		if r.Error != "" {
			text += ": " + r.Error
		}
		if a.firstError[1] == "" {
			a.firstError[1] = text
		}
		if a.firstError[0] == "" && !x.ramp {
			a.firstError[0] = text
		}
	}
	if a.store == nil {
		a.store = &armStore{arena: new(offheap.Arena)}
		runtime.AddCleanup(a.store, (*offheap.Arena).Free, a.store.arena)
	}
	a.store.append(x)
}

// countArm counts the arm's requests as compare.Usable does and returns the
// samples' values per metric (successful measured requests, in the order
// they were sent).
func countArm(a *ArmResult, includeRamp bool) [][]float64 {
	var used []armSample
	a.Used, a.Failed, a.Warmup = 0, 0, 0
	a.kept.each(func(x armSample) {
		switch {
		case x.warmup:
			a.Warmup++
		case x.ramp && !includeRamp:
		case x.failed:
			a.Failed++
		default:
			used = append(used, x)
		}
	})
	a.Used = len(used)
	a.Requests = a.Used + a.Failed
	a.FirstError = a.kept.firstError[0]
	if includeRamp {
		a.FirstError = a.kept.firstError[1]
	}
	slices.SortStableFunc(used, func(x, y armSample) int { return x.seq - y.seq })
	values := make([][]float64, numMetrics)
	for _, x := range used {
		for i := range values {
			if x.has[i] {
				values[i] = append(values[i], x.values[i])
			}
		}
	}
	return values
}
