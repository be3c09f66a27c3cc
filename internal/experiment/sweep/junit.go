package sweep

import (
	"github.com/omnibench/omnibench/internal/junit"
	"github.com/omnibench/omnibench/internal/run/slo"
)

// levelSuite is the SLO suite of one point, named after its level
// ("slo concurrency=8") so CI lists each level's objectives apart.
func levelSuite(a Axis, p Point, suffix string) junit.Suite {
	s := slo.JUnitSuite(p.SLOs)
	s.Name = "slo " + string(a) + "=" + a.Format(p.Level) + suffix
	if p.Partial {
		s.Name += " (interrupted)"
	}
	return s
}

// JUnitSuites returns one suite per level: each SLO is a test case that
// fails when the level missed it.
func (r *Result) JUnitSuites() []junit.Suite {
	out := make([]junit.Suite, 0, len(r.Points))
	for _, p := range r.Points {
		out = append(out, levelSuite(r.Axis, p, ""))
	}
	return out
}

// JUnitSuites returns a "capacity" suite with one case that fails when no
// level met every SLO (its message is the answer), followed by the SLO suite
// of the capacity level. The failing levels the search ran on purpose to
// bracket the answer are not reported as failures: they are the search
// working, not a regression.
func (s *Search) JUnitSuites() []junit.Suite {
	c := junit.Case{Name: "capacity " + string(s.Axis), Classname: "omnibench.capacity", Message: s.Answer()}
	if !s.Found {
		c.Failure = s.Answer()
	}
	out := []junit.Suite{{Name: "capacity", Cases: []junit.Case{c}}}
	if s.Found {
		if st, ok := s.step(s.Capacity); ok {
			out = append(out, levelSuite(s.Axis, st.Point, " (capacity)"))
		}
	}
	return out
}
