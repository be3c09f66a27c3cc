package compare

import (
	"github.com/omnibench/omnibench/report"
)

// HTML builds the self-contained HTML report of a comparison: the tables and
// both runs' distributions of every compared metric side by side.
func (r *Result) HTML(a, b Run) report.HTMLReport {
	return report.HTMLReport{
		Title:    "omnibench compare: " + a.Name + " vs " + b.Name,
		Header:   &a.Header,
		Sections: report.ABSections(htmlArm(a), htmlArm(b), r.Tables()),
	}
}

// htmlArm collects the compared samples of one run in display units, from
// the same records Compare uses (successful, not warm-up).
func htmlArm(run Run) report.ABArm {
	arm := report.ABArm{Name: run.Name, Samples: map[string][]float64{}, Units: map[string]string{}}
	for _, m := range Metrics() {
		var xs []float64
		for i := range run.Records {
			rec := &run.Records[i]
			if rec.Warmup || !rec.OK() {
				continue
			}
			if v, ok := m.Value(rec); ok {
				xs = append(xs, v*m.Scale)
			}
		}
		if len(xs) > 0 {
			arm.Samples[m.Name] = xs
			arm.Units[m.Name] = m.Display
		}
	}
	return arm
}
