package continuity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseThreshold reads a threshold (or any time) given as seconds ("0.1")
// or as a Go duration ("100ms"); it must be finite and not negative.
func ParseThreshold(s string) (float64, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		d, derr := time.ParseDuration(s)
		if derr != nil {
			return 0, fmt.Errorf("%q: want seconds (0.1) or a duration (100ms)", s)
		}
		v = d.Seconds()
	}
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: must be a finite, non-negative time", s)
	}
	return v, nil
}
