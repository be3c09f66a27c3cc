package breakdown

import (
	"math"
	"strings"

	"github.com/omnibench/omnibench/report"
)

// TitleDiff is the title of the table comparing two runs' breakdowns.
const TitleDiff = "Where the time went: B against A, per stage (server means, ms)"

// Diff compares two runs' breakdowns (B against A) stage by stage, as
// `compare` shows it: each replica's mean times in both runs, from the
// servers' own histograms.
type Diff struct {
	// Pipeline is the pipeline's mean e2e (Stage "pipeline").
	Pipeline StageDiff   `json:"pipeline"`
	Stages   []StageDiff `json:"stages"`
	// Reasons say why there is no comparison: a run's breakdown cannot be
	// computed (then Stages is empty).
	Reasons []string `json:"reasons,omitempty"`
}

// StageDiff is one replica of one stage in both runs.
type StageDiff struct {
	Stage   string     `json:"stage"`
	Replica string     `json:"replica,omitempty"`
	A       StageMeans `json:"a"`
	B       StageMeans `json:"b"`
}

// StageMeans are a replica's requests and mean times in one run, in
// seconds; NaN (null in JSON) where the run has no such replica or it saw
// no requests.
type StageMeans struct {
	Requests float64 `json:"requests"`
	Queue    float64 `json:"queue_s"`
	Prefill  float64 `json:"prefill_s"`
	Decode   float64 `json:"decode_s"`
	E2E      float64 `json:"e2e_s"`
}

// MarshalJSON encodes the StageMeans with NaN figures as null.
func (m StageMeans) MarshalJSON() ([]byte, error) { return marshalFinite(m) }

// Compare compares b against a, replica by replica: the replicas of
// either run, in A's order then B's new ones.
func Compare(a, b Breakdown) Diff {
	d := Diff{Pipeline: StageDiff{Stage: "pipeline"}, Stages: []StageDiff{}}
	for _, x := range []struct {
		role string
		b    Breakdown
	}{{"A", a}, {"B", b}} {
		if !x.b.Computable {
			d.Reasons = append(d.Reasons, x.role+"'s breakdown cannot be computed: "+strings.Join(x.b.Reasons, "; "))
		}
	}
	if len(d.Reasons) > 0 {
		return d
	}
	nan := math.NaN()
	d.Pipeline.A = StageMeans{Requests: a.Requests, Queue: nan, Prefill: nan, Decode: nan, E2E: a.Attribution.ServerE2E}
	d.Pipeline.B = StageMeans{Requests: b.Requests, Queue: nan, Prefill: nan, Decode: nan, E2E: b.Attribution.ServerE2E}
	index := map[[2]string]int{}
	add := func(rows []StageRow, side func(*StageDiff) *StageMeans) {
		for _, r := range rows {
			key := [2]string{r.Stage, r.Replica}
			i, ok := index[key]
			if !ok {
				i = len(d.Stages)
				index[key] = i
				d.Stages = append(d.Stages, StageDiff{Stage: r.Stage, Replica: r.Replica, A: unknownMeans(), B: unknownMeans()})
			}
			*side(&d.Stages[i]) = StageMeans{Requests: r.Requests, Queue: r.Queue.Mean, Prefill: r.Prefill.Mean,
				Decode: r.Decode.Mean, E2E: r.E2E.Mean}
		}
	}
	add(a.Stages, func(s *StageDiff) *StageMeans { return &s.A })
	add(b.Stages, func(s *StageDiff) *StageMeans { return &s.B })
	return d
}

// unknownMeans are the means of a replica a run does not have.
func unknownMeans() StageMeans {
	nan := math.NaN()
	return StageMeans{Requests: nan, Queue: nan, Prefill: nan, Decode: nan, E2E: nan}
}

// Table is the comparison in 100 columns: per replica, the mean e2e of
// both runs and the differences (B less A) of its mean times.
func (d Diff) Table() report.Table {
	t := report.Table{Title: TitleDiff}
	if len(d.Reasons) > 0 {
		t.Notes = append([]string{"no per-stage comparison"}, d.Reasons...)
		return t
	}
	t.Header = []string{"stage/replica", "A e2e", "B e2e", "e2e B-A", "queue B-A", "prefill B-A", "decode B-A"}
	for _, s := range append([]StageDiff{d.Pipeline}, d.Stages...) {
		name := s.Stage
		if s.Replica != "" {
			name += "/" + s.Replica
		}
		t.Rows = append(t.Rows, []string{name, ms(s.A.E2E), ms(s.B.E2E), signedMS(s.B.E2E - s.A.E2E),
			signedMS(s.B.Queue - s.A.Queue), signedMS(s.B.Prefill - s.A.Prefill), signedMS(s.B.Decode - s.A.Decode)})
	}
	t.Notes = []string{"means per request over each run's requests, from the server's histograms; " +
		"B-A = B's mean less A's; - where a run has no such replica or figure"}
	return t
}

// signedMS formats a difference of seconds as signed milliseconds.
func signedMS(s float64) string {
	v := ms(s)
	if finite(s) && s > 0 {
		return "+" + v
	}
	return v
}
