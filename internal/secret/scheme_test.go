package secret

import (
	"bytes"
	"fmt"
	"testing"
)

// hasSchemeBySearches is hasScheme as four searches, the definition the
// one pass must keep.
func hasSchemeBySearches(b []byte) bool {
	for _, tail := range schemeTails() {
		if bytes.Contains(b, []byte(tail+" ")) {
			return true
		}
	}
	return false
}

// FuzzHasScheme checks that the one pass of hasScheme finds a scheme's
// tail exactly where searching for each spelling does.
func FuzzHasScheme(f *testing.F) {
	for _, s := range []string{"", " ", "Bearer x", "BEARER", "earer ", "xbasic  ", "ASIC ", "Basic\n",
		"r c R C ", "bearEr x", "Asic x", `m{a="bearer x"} 1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := hasScheme(b), hasSchemeBySearches(b); got != want {
			t.Fatalf("hasScheme(%q) = %v, want %v", b, got, want)
		}
	})
}

// exposition is n lines of a Prometheus text exposition, about 100 bytes
// each, without a scheme word.
func exposition(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "vllm:request_latency_seconds_bucket{stage=\"%d\",replica=\"%d\",le=\"0.25\"} %d\n", i%16, i%32, i)
	}
	return b.Bytes()
}

// BenchmarkRedactorBytesExposition is what masking costs an interval
// scrape of a large server: Redactor.Bytes over 16 MB of exposition with
// no secret value and no scheme word in it, the common case.
func BenchmarkRedactorBytesExposition(b *testing.B) {
	body := exposition(160_000)
	b.SetBytes(int64(len(body)))
	var r *Redactor
	for b.Loop() {
		if got := r.Bytes(body); &got[0] != &body[0] {
			b.Fatal("Bytes copied a body with nothing to mask")
		}
	}
}
