package summary

import "testing"

// BenchmarkSetAdd is the bookkeeping of one finished short chat response
// (26 text gaps) in the run's Set: what the runner's figure sink spends per
// request.
func BenchmarkSetAdd(b *testing.B) {
	rec := shortChatRecord()
	set := NewSet()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		rec.Seq = i
		set.Add(&rec)
		i++
	}
}
