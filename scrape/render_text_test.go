package scrape

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitLabelKey(t *testing.T) {
	key := LabelKey(map[string]string{"a": `x",b="y`, "c": "1,2", "d": ""})
	got := splitLabelKey(key)
	want := []string{`a="x\",b=\"y"`, `c="1,2"`, `d=""`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("split %q = %q, want %q", key, got, want)
	}
	if splitLabelKey("-") != nil || splitLabelKey("") != nil {
		t.Error("no labels")
	}
}

// TestWriteTextWidth: long families and label sets stay within the width;
// labels shared by every series are said once; a series too long for its
// row gets its own line.
func TestWriteTextWidth(t *testing.T) {
	before, after := Families{}, Families{}
	text := func(v string) string {
		return "# TYPE vllm:request_time_per_output_token_seconds_total counter\n" +
			`vllm:request_time_per_output_token_seconds_total{model_name="Qwen/Qwen3-Omni-30B-A3B-Instruct",stage="0",replica="0",from_stage="0",to_stage="1"} ` + v + "\n" +
			`vllm:request_time_per_output_token_seconds_total{model_name="Qwen/Qwen3-Omni-30B-A3B-Instruct",stage="1",replica="0",from_stage="0",to_stage="1"} ` + v + "\n"
	}
	var err error
	if before, err = Parse("text/plain", []byte(text("1"))); err != nil {
		t.Fatal(err)
	}
	if after, err = Parse("text/plain", []byte(text("123456789"))); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Diff(before, after).WriteText(&buf, TableOptions{}, 0); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, l := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(l) > TextWidth {
			t.Errorf("%d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
	if strings.Count(out, `model_name="Qwen/Qwen3-Omni-30B-A3B-Instruct"`) != 1 ||
		!strings.Contains(out, `vllm:request_time_per_output_token_seconds_total{stage="1"}`) || !strings.Contains(out, "123456788") {
		t.Errorf("output:\n%s", out)
	}
}
