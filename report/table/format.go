package table

import (
	"math"
	"strconv"
	"strings"
)

// Residue is the magnitude below which a figure is floating-point noise
// (4.158 - 4.158 computes as -8.88e-16) and prints as 0. No figure
// omnibench reports lives there: latencies are at least microseconds
// (1e-6 s), and p-values have their own FormatP.
const Residue = 1e-9

// Denoise returns 0 for floating-point residue (and negative zero), v
// otherwise: the one rule every table applies before formatting a figure.
func Denoise(v float64) float64 {
	if math.Abs(v) < Residue {
		return 0
	}
	return v
}

// FormatValue prints a figure for a table cell: about four significant
// digits without exponents in the range latencies and RTFs live in, "-"
// when undefined, 0 for residue (see Denoise). Columns of means and
// percentiles keep their decimals even when a value happens to be whole.
func FormatValue(v float64) string {
	v = Denoise(v)
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
	return FormatFixed(p, 1) + "%"
}

// FormatFixed prints v with prec decimals, "-" when undefined, and 0 (not
// "-0.000") for residue.
func FormatFixed(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := strconv.FormatFloat(Denoise(v), 'f', prec, 64)
	if strings.Trim(s, "-0.") == "" {
		// Rounded to zero: no sign.
		s = strings.TrimPrefix(s, "-")
	}
	return s
}

// IsFigure reports whether a cell reads as a number ("12.5", "-", "3/4",
// "95%", "+3.1%", "4 [1]" with its footnote marker, "242.5 (200-250)" with
// the bucket it was estimated in), which tables right-align so digits line
// up.
func IsFigure(s string) bool {
	s = strings.TrimPrefix(strings.TrimSpace(StripFootnoteMarkers(s)), "+")
	if v, bucket, ok := strings.Cut(s, " ("); ok && strings.HasSuffix(bucket, ")") {
		lo, hi, _ := strings.Cut(strings.TrimSuffix(bucket, ")"), "-")
		lo = strings.TrimLeft(lo, "≤≥")
		return IsFigure(v) && IsFigure(lo) && (hi == "" || IsFigure(hi))
	}
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "%")
	if a, b, ok := strings.Cut(s, "/"); ok {
		_, e1 := strconv.ParseFloat(a, 64)
		_, e2 := strconv.ParseFloat(b, 64)
		return e1 == nil && e2 == nil
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
