package compare

import "github.com/omnibench/omnibench/report"

// HTML builds the self-contained HTML report of a comparison: the tables and
// both runs' distributions of every compared metric side by side, from the
// same samples the tests used.
func (r *Result) HTML(a, b Run) report.HTMLReport {
	armA := report.ABArm{Name: a.Name, Samples: map[string][]float64{}, Units: map[string]string{}}
	armB := report.ABArm{Name: b.Name, Samples: map[string][]float64{}, Units: map[string]string{}}
	for _, row := range r.Rows {
		m := row.Metric
		for _, side := range []struct {
			arm *report.ABArm
			xs  []float64
		}{{&armA, row.SamplesA}, {&armB, row.SamplesB}} {
			if len(side.xs) == 0 {
				continue
			}
			scaled := make([]float64, len(side.xs))
			for i, x := range side.xs {
				scaled[i] = x * m.Scale
			}
			side.arm.Samples[m.Name] = scaled
			side.arm.Units[m.Name] = m.Display
		}
	}
	return report.HTMLReport{
		Title:    "omnibench compare: " + a.Name + " vs " + b.Name,
		Runs:     []report.NamedHeader{{Name: "A", Header: a.Header}, {Name: "B", Header: b.Header}},
		Sections: report.ABSections(armA, armB, r.Tables()),
	}
}
