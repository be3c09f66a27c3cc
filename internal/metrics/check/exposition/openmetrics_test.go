package exposition

import (
	"strconv"
	"strings"
	"testing"
)

// TestOpenMetricsRules holds the scanner to the OpenMetrics 1.0 rules one
// behaviour at a time: what the specification allows that a stricter
// reading would reject, and what it forbids that a looser one would let
// through. want lists the violations as rule@line; none means valid.
func TestOpenMetricsRules(t *testing.T) {
	cases := []struct {
		behaviour string
		body      string
		want      string
	}{
		// Escapes: a backslash may precede any character but the line end.
		{"a backslash before another character in a label value stands for itself",
			`# TYPE files counter` + "\n" + `files_total{dir="C:\temp\x",q="\"\\\n"} 3` + "\n", ""},
		{"a backslash before another character in HELP stands for itself",
			`# HELP disk Free space on D:\ and \q, in \bytes.` + "\n" + `disk 1` + "\n", ""},
		{"HELP may not end in a backslash (it would escape the line end)",
			`# HELP disk Free space \` + "\n" + `disk 1` + "\n", "escape@1"},

		// Empty metadata means none.
		{"an empty HELP", "# TYPE jobs gauge\n# HELP jobs \njobs 4\n", ""},
		{"an empty UNIT", "# TYPE jobs gauge\n# UNIT jobs \njobs 4\n", ""},
		{"UNIT needs the space before the (possibly empty) unit", "# TYPE jobs gauge\n# UNIT jobs\njobs 4\n", "unit@2"},

		// Units.
		{"no unit on an info family", "# TYPE build_version info\n# UNIT build_version version\nbuild_version_info{v=\"1\"} 1\n", "unit@2"},
		{"no unit on a stateset, whichever line comes first", "# UNIT mode_on on\n# TYPE mode_on stateset\nmode_on{mode_on=\"x\"} 1\n", "unit@1"},

		// Timestamps never go back within a series; they may repeat.
		{"a series may repeat its timestamp", "# TYPE temp gauge\ntemp 20 100\ntemp 21 100\ntemp 22 100.5\n", ""},
		{"a series' timestamps may not go back", "# TYPE temp gauge\ntemp 20 100\ntemp 21 99.5\n", "timestamp@3"},

		// Summaries: the sum counts like a counter.
		{"a summary's _sum is not negative", "# TYPE lag summary\nlag_sum -2\nlag_count 1\n", "summary@2"},

		// Histograms: _count and _sum come together; negative buckets rule out a sum.
		{"a histogram's _count comes with a _sum", "# TYPE wait histogram\nwait_bucket{le=\"+Inf\"} 2\nwait_count 2\n", "histogram-count@3"},
		{"a histogram's _sum comes with a _count", "# TYPE wait histogram\nwait_bucket{le=\"+Inf\"} 2\nwait_sum 2\n", "histogram-count@2"},
		{"a histogram with a negative bucket and no _count or _sum",
			"# TYPE drift histogram\ndrift_bucket{le=\"-1.0\"} 1\ndrift_bucket{le=\"+Inf\"} 3\n", ""},
		{"a histogram with a negative bucket has no _sum",
			"# TYPE drift histogram\ndrift_bucket{le=\"-1.0\"} 1\ndrift_bucket{le=\"+Inf\"} 3\ndrift_count 3\ndrift_sum 0.5\n", "histogram-count@5"},
		{"a histogram's _sum is not negative", "# TYPE wait histogram\nwait_bucket{le=\"+Inf\"} 2\nwait_count 2\nwait_sum -1\n", "histogram-count@4"},
		{"a gauge histogram's _gcount comes with a _gsum", "# TYPE queue gaugehistogram\nqueue_bucket{le=\"+Inf\"} 2\nqueue_gcount 2\n", "histogram-count@3"},
		{"a gauge histogram's _gsum may be negative with a negative bucket",
			"# TYPE skew gaugehistogram\nskew_bucket{le=\"-2.0\"} 1\nskew_bucket{le=\"+Inf\"} 2\nskew_gcount 2\nskew_gsum -7\n", ""},
		{"a gauge histogram's _gsum is not negative without a negative bucket",
			"# TYPE skew gaugehistogram\nskew_bucket{le=\"2.0\"} 1\nskew_bucket{le=\"+Inf\"} 2\nskew_gcount 2\nskew_gsum -7\n", "histogram-count@5"},
		{"le values other than +Inf need not be canonical",
			"# TYPE size histogram\nsize_bucket{le=\"1e-04\"} 0\nsize_bucket{le=\"100000\"} 1\nsize_bucket{le=\"+Inf\"} 1\n", ""},
		{"the last bucket's le is written +Inf exactly", "# TYPE size histogram\nsize_bucket{le=\"+inf\"} 1\n", "histogram-buckets@2"},

		// Family names may not clash with the sample names of another family.
		{"a gauge named like a counter's _created sample", "# TYPE jobs_created gauge\njobs_created 5\n# TYPE jobs counter\njobs_total 1\n", "metric-name@3"},
		{"a counter whose _total sample is another family", "# TYPE hits counter\n# TYPE hits_total gauge\n", "metric-name@2"},
		{"names that only share a stem do not clash", "# TYPE hits counter\nhits_total 1\n# TYPE hits_count gauge\nhits_count 2\n", ""},
	}
	for _, c := range cases {
		res := Validate([]byte(c.body+"# EOF\n"), OpenMetrics)
		var got []string
		for _, v := range res.Violations {
			got = append(got, v.Rule+"@"+strconv.Itoa(v.Line))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: violations %q, want %q\n%s", c.behaviour, got, c.want, describe(res))
		}
	}
}

// TestTextFormatEscapesStayStrict: the text format knows only \\, \" and
// \n in label values and \\ and \n in HELP (expfmt rejects the others), so
// what OpenMetrics allows is still a violation there.
func TestTextFormatEscapesStayStrict(t *testing.T) {
	res := Validate([]byte("# HELP disk Free on D:\\q\ndisk{dir=\"C:\\temp\"} 1\n"), Text)
	var got []string
	for _, v := range res.Violations {
		got = append(got, v.Rule+"@"+strconv.Itoa(v.Line))
	}
	if strings.Join(got, " ") != "escape@1 escape@2" {
		t.Errorf("violations %q, want escape@1 escape@2\n%s", got, describe(res))
	}
}
