package scenarios

import (
	"errors"
	"fmt"

	"github.com/omnibench/omnibench/internal/run/slo"
)

// ParseSLOs parses the scenario's SLOs and those given with --slo, which
// are checked together: the scenario's first, then the flags'. Every
// expression that does not parse is reported, each naming where it came
// from (the scenario's slos[i], or --slo).
func (s *Scenario) ParseSLOs(flags []string) ([]slo.SLO, error) {
	var out []slo.SLO
	var errs []error
	for i, e := range s.SLOs {
		parsed, err := slo.ParseFrom(fmt.Sprintf("scenario %s: slos[%d]", s.Name, i), e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, parsed)
	}
	fromFlags, err := slo.ParseAll(flags)
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return append(out, fromFlags...), nil
}
