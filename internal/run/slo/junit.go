package slo

import (
	"fmt"
	"strings"

	"github.com/omnibench/omnibench/internal/junit"
)

// JUnitSuite turns results into a JUnit suite named "slo": one test case per
// SLO, named by its expression as written, failing when the SLO missed (a
// figure without data is a failure too). The case's message is the
// one-line verdict; a failure's text adds the figure, observed value and
// limit on separate lines.
func JUnitSuite(rs []Result) junit.Suite {
	s := junit.Suite{Name: "slo", Cases: make([]junit.Case, 0, len(rs))}
	for _, r := range rs {
		name := strings.TrimSpace(r.SLO.Expr)
		if name == "" {
			name = r.SLO.String()
		}
		c := junit.Case{Name: name, Classname: "omnibench.slo", Message: r.Message}
		if !r.Pass {
			observed := "no data"
			if !r.NoData {
				observed = quantity(r.Observed, r.SLO.Unit)
			}
			c.Failure = fmt.Sprintf("%s\nfigure: %s\nobserved: %s\nlimit: %s %s",
				r.Message, r.SLO.Figure, observed, r.SLO.Op, quantity(r.SLO.Value, r.SLO.Unit))
		}
		s.Cases = append(s.Cases, c)
	}
	return s
}
