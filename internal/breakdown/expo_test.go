package breakdown

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/scrape"
)

// expo writes a small text exposition by hand: families in the order first
// used, histograms from raw observations.
type expo struct {
	order []string
	types map[string]string
	lines map[string][]string
}

func newExpo() *expo { return &expo{types: map[string]string{}, lines: map[string][]string{}} }

func (e *expo) family(name, typ string) {
	if _, ok := e.types[name]; !ok {
		e.order = append(e.order, name)
		e.types[name] = typ
	}
}

// declare adds a family without samples (a stats-off server's shape).
func (e *expo) declare(name, typ string) *expo { e.family(name, typ); return e }

func (e *expo) counter(name, labels string, v float64) *expo {
	e.family(name, "counter")
	e.lines[name] = append(e.lines[name], fmt.Sprintf("%s{%s} %g", name, labels, v))
	return e
}

func (e *expo) gauge(name, labels string, v float64) *expo {
	e.family(name, "gauge")
	e.lines[name] = append(e.lines[name], fmt.Sprintf("%s{%s} %g", name, labels, v))
	return e
}

// hist adds one histogram series holding the observations obs.
func (e *expo) hist(name, labels string, bounds []float64, obs ...float64) *expo {
	e.family(name, "histogram")
	var sum float64
	for _, o := range obs {
		sum += o
	}
	sep := ""
	if labels != "" {
		sep = ","
	}
	for _, b := range bounds {
		n := 0
		for _, o := range obs {
			if o <= b {
				n++
			}
		}
		e.lines[name] = append(e.lines[name], fmt.Sprintf("%s_bucket{%s%sle=\"%g\"} %d", name, labels, sep, b, n))
	}
	e.lines[name] = append(e.lines[name],
		fmt.Sprintf("%s_bucket{%s%sle=\"+Inf\"} %d", name, labels, sep, len(obs)),
		fmt.Sprintf("%s_sum{%s} %g", name, labels, sum),
		fmt.Sprintf("%s_count{%s} %d", name, labels, len(obs)))
	return e
}

func (e *expo) String() string {
	var b strings.Builder
	for _, name := range e.order {
		fmt.Fprintf(&b, "# HELP %s test\n# TYPE %s %s\n", name, name, e.types[name])
		for _, l := range e.lines[name] {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// series parses the exposition and selects from it, as taken at at.
func (e *expo) series(t *testing.T, at time.Time) Series {
	t.Helper()
	fs, err := scrape.Parse("text/plain; version=0.0.4", []byte(e.String()))
	if err != nil {
		t.Fatalf("parse:\n%s\n%v", e, err)
	}
	return Select(fs, at)
}

// Bucket layouts of the fixtures: the upstream request-latency buckets and
// the transfer families' fast seconds (docs/reference/metric-families.md).
var (
	slowBounds = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10}
	fastBounds = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}
)

const model = `model_name="m"`

func sr(stage, replica int) string {
	return fmt.Sprintf(`%s,replica="%d",stage="%d"`, model, replica, stage)
}

func edge(fs, fr, ts, tr int) string {
	return fmt.Sprintf(`from_replica="%d",from_stage="%d",%s,to_replica="%d",to_stage="%d"`, fr, fs, model, tr, ts)
}

// hops adds n hops on one edge, each taking tx, in flight and rx.
func (e *expo) hops(labels string, n int, tx, inFlight, rx float64) *expo {
	rep := func(v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	e.hist(famTransferTx, labels, fastBounds, rep(tx)...)
	e.hist(famTransferInFlight, labels, fastBounds, rep(inFlight)...)
	e.hist(famTransferRx, labels, fastBounds, rep(rx)...)
	return e.hist(famTransferSize, labels, []float64{1024, 4096}, rep(2048)...)
}

// stageTimes adds one stage replica's e2e observations with queue,
// prefill and decode splitting each.
func (e *expo) stage(stage, replica int, e2e ...float64) *expo {
	l := sr(stage, replica)
	e.hist(famStageE2E, l, slowBounds, e2e...)
	var prefill, decode, queue []float64
	for _, v := range e2e {
		queue, prefill, decode = append(queue, 0), append(prefill, v/4), append(decode, v*3/4)
	}
	e.hist(famStageQueue, l, slowBounds, queue...)
	e.hist(famStagePrefill, l, slowBounds, prefill...)
	e.hist(famStageDecode, l, slowBounds, decode...)
	e.hist(famStageTTFT, l, slowBounds, prefill...)
	return e.counter(famStageGenTokens, l, float64(10*len(e2e)))
}

func sortedKinds(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		where := f.Edge
		if where == "" {
			where = f.Stage + "/" + f.Replica
		}
		out = append(out, f.Kind+" "+where)
	}
	sort.Strings(out)
	return out
}
