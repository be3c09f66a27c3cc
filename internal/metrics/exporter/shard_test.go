package exporter

import (
	"testing"

	"github.com/omnibench/omnibench/load"
)

// A shard's series all carry its shard label, so N shards scraped into one
// Prometheus stay apart until a query sums them; a whole run's carry none.
func TestShardLabel(t *testing.T) {
	for _, shard := range []string{"", "2"} {
		e, err := New(Options{ModelName: "m", Endpoint: "/v1/audio/speech", Scenario: "s", Shard: shard})
		if err != nil {
			t.Fatal(err)
		}
		e.OnStart(load.Arrival{Seq: 1})
		fams, err := e.Gatherer().Gather()
		if err != nil {
			t.Fatal(err)
		}
		series := 0
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				series++
				got, has := "", false
				for _, l := range m.GetLabel() {
					if l.GetName() == LabelShard {
						got, has = l.GetValue(), true
					}
				}
				if has != (shard != "") || got != shard {
					t.Errorf("shard %q: %s has shard label %q (present %v)", shard, f.GetName(), got, has)
				}
			}
		}
		if series == 0 {
			t.Fatalf("shard %q: no series gathered", shard)
		}
	}
}
