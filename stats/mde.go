package stats

import "math"

// MDE returns the minimum detectable effect: the smallest true difference in
// means that a two-sided test at level alpha would detect with the given
// power (0.8 is customary), for a difference estimated with standard error se
// on df degrees of freedom:
//
//	MDE = (t_{1-alpha/2, df} + t_{power, df}) * se
//
// Compare uses the Welch SE and Welch–Satterthwaite df of the observed runs,
// so the MDE says how large a change these sample sizes and this noise could
// have revealed. It returns 0 when se is 0 (any difference is detectable) and
// NaN when df is not positive or alpha or power are outside (0, 1).
func MDE(se, df, alpha, power float64) float64 {
	if se == 0 {
		return 0
	}
	if !(df > 0) || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1) || math.IsNaN(se) {
		return math.NaN()
	}
	return (tQuantile(1-alpha/2, df) + tQuantile(power, df)) * se
}
