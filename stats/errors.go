package stats

import (
	"errors"
	"fmt"
	"math"
)

// Errors returned (wrapped, with the arm and position) by the tests.
var (
	// ErrTooFewSamples: an arm has fewer values than the test needs.
	ErrTooFewSamples = errors.New("too few samples")
	// ErrNonFinite: an input value is NaN or infinite.
	ErrNonFinite = errors.New("non-finite value")
)

// checkArm validates one arm of a two-sample test: at least minN values, all
// finite. The error names the arm ("A" or "B") and the index of a bad value.
func checkArm(name string, xs []float64, minN int) error {
	if len(xs) < minN {
		return fmt.Errorf("stats: arm %s has %d sample(s), need at least %d: %w", name, len(xs), minN, ErrTooFewSamples)
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("stats: arm %s, sample %d is %v: %w", name, i, x, ErrNonFinite)
		}
	}
	return nil
}

// checkArms validates both arms of a two-sample test.
func checkArms(a, b []float64, minN int) error {
	if err := checkArm("A", a, minN); err != nil {
		return err
	}
	return checkArm("B", b, minN)
}
