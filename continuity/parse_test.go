package continuity

import "testing"

func TestParseThreshold(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{{"0.1", 0.1, true}, {"100ms", 0.1, true}, {"1.5s", 1.5, true}, {" 2 ", 2, true}, {"0", 0, true}, {"-0.1", 0, false}, {"NaN", 0, false}, {"Inf", 0, false}, {"1h2", 0, false}} {
		got, err := ParseThreshold(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseThreshold(%q) = %g, %v", c.in, got, err)
		}
	}
}
