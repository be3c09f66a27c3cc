package report

import "testing"

// TestServerVsClientBucketCells: a server quantile prints with the bucket
// it was estimated in, a client value inside that bucket is no difference
// ("in bucket"), one outside it is, and the server column still lines its
// digits up (right-aligned) in the HTML table.
func TestServerVsClientBucketCells(t *testing.T) {
	bucket := func(lo, hi float64) *Bucket { return &Bucket{Low: &lo, High: &hi} }
	rows := []Comparison{
		{Figure: "TTFP p95", Server: ptr(242.5), Client: ptr(164.1), Unit: "ms", ServerBucket: bucket(200, 250)},
		{Figure: "TTFP p50", Server: ptr(175), Client: ptr(260), Diff: ptr(-85), Unit: "ms", ServerBucket: bucket(100, 250)},
		{Figure: "e2e p50", Server: ptr(12000), Client: ptr(9000), Diff: ptr(3000), Unit: "ms", ServerBucket: &Bucket{Low: ptr(10000)}},
		{Figure: "requests completed", Server: ptr(8), Client: ptr(8), Diff: ptr(0)},
	}
	want := [][2]string{{"242.5 (200-250)", "in bucket"}, {"175 (100-250)", "-85"}, {"12000 (≥10000)", "3000"}, {"8", "0"}}
	tab := serverVsClientTable(rows)
	for i, w := range want {
		if got := [2]string{tab.Rows[i][1], tab.Rows[i][3]}; got != w {
			t.Errorf("row %q: server %q, difference %q; want %q, %q", rows[i].Figure, got[0], got[1], w[0], w[1])
		}
	}
	if !rows[0].InBucket() || rows[1].InBucket() || rows[3].InBucket() {
		t.Error("InBucket: want only the first row, whose client value lies in the server's bucket")
	}
	html := tableOf(serverVsClientSection(rows).Tables[0])
	if !html.Header[1].Num {
		t.Error("the server column of the HTML table is not right-aligned: its bucketed cells do not read as figures")
	}
}
