package slo

import (
	"fmt"
	"math"
	"strconv"
)

// MaxErrorRate is `run --max-error-rate` as the SLO it stands for,
// error_rate<=limit, so a run that failed too often is a missed SLO like any
// other (exit 3) and its verdict is printed and written with the others. ok
// is false at 1, which is no gate.
func MaxErrorRate(limit float64) (gate SLO, ok bool, err error) {
	if math.IsNaN(limit) || limit < 0 || limit > 1 {
		return SLO{}, false, fmt.Errorf("--max-error-rate %v: must be a fraction from 0 to 1 (1 = no gate)", limit)
	}
	if limit == 1 {
		return SLO{}, false, nil
	}
	gate, err = ParseFrom("--max-error-rate", figErrorRate+"<="+strconv.FormatFloat(limit, 'g', -1, 64))
	return gate, err == nil, err
}
