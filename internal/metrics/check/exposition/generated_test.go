package exposition

import (
	"math/rand"
	"strings"
	"testing"
)

// TestGeneratedAcceptedByExpfmt is the fuzz test's differential property
// over expositions built from a small grammar with common mistakes mixed
// in (a seeded generator, so every run checks the same cases): about a
// third come out valid, and each of those expfmt's text parser must read.
func TestGeneratedAcceptedByExpfmt(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	pick := func(s ...string) string { return s[r.Intn(len(s))] }
	accepted := 0
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := r.Intn(6); j >= 0; j-- {
			name := pick("a", "a_total", "a_bucket", "a_count", "a_sum", "b", "a_created", "b_sum")
			switch r.Intn(5) {
			case 0:
				b.WriteString(pick("# TYPE ", "# HELP ", "#TYPE ", " # HELP ", "# ") + pick("a", "b", "a_count", "a_sum") + pick(" counter", " histogram", " summary", " gauge", " untyped", " x \\n", " \\\\", "", " \\\"") + "\n")
			case 1:
				b.WriteString(pick("", "", "\n", "  ", "# c\n"))
			default:
				lbl := ""
				if r.Intn(2) == 0 {
					lbl = "{" + pick("", "le=\"1\"", "le=\"+Inf\"", "quantile=\"0.5\"", "x=\"y\"", "le=\"a\"", "x=\"1\",le=\"+Inf\"", "x=\"\\n\"", "x=\"a\",") + "}"
				}
				b.WriteString(name + lbl + pick(" ", "\t", "  ", "") + pick("1", "NaN", "-1", "2", "+Inf", "1.5", "Inf", "") + pick("", " 123", " 1.5", " ", "\t-5") + "\n")
			}
		}
		body := []byte(b.String())
		res := Validate(body, Text)
		if len(res.Violations) == 0 {
			accepted++
			if err := expfmtAccepts(body); err != nil {
				t.Fatalf("accepted %q: %v", body, err)
			}
		}
	}
	if accepted < 3000 {
		t.Errorf("only %d of 20000 generated expositions valid: the generator no longer exercises the property", accepted)
	}
}
