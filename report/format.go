package report

import (
	"math"
	"strconv"
)

// FormatValue prints a figure for a table cell: about four significant
// digits without exponents in the range latencies and RTFs live in, "-"
// when undefined. Columns of means and percentiles keep their decimals even
// when a value happens to be whole.
func FormatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "-"
	case v == 0:
		return "0"
	case math.IsInf(v, 0) || a >= 1e7 || a < 1e-3:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	default:
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
}

// FormatP prints a p-value: three decimals, or one significant digit in
// exponent form below 0.001.
func FormatP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "-"
	case p == 0 || p >= 0.001:
		return strconv.FormatFloat(p, 'f', 3, 64)
	default:
		return strconv.FormatFloat(p, 'e', 1, 64)
	}
}

// FormatPct prints a percentage with one decimal.
func FormatPct(p float64) string {
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return "-"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}
