package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestRenderFormats(t *testing.T) {
	tb := Table{Title: "Latency", Header: []string{"metric", "p50_ms"}, Rows: [][]string{{"ttfp", "12.5"}, {"e2e", "900"}}, Notes: []string{"n=2"}}
	var buf bytes.Buffer
	if err := Render(&buf, FormatTable, tb); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"Latency", "p50_ms", "ttfp", "12.5", "n=2"} {
		if !strings.Contains(out, want) {
			t.Errorf("table output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "P 50 MS") {
		t.Errorf("header was reformatted:\n%s", out)
	}

	buf.Reset()
	if err := Render(&buf, FormatMarkdown, tb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| ttfp") || !strings.Contains(buf.String(), "### Latency") {
		t.Errorf("markdown output:\n%s", buf.String())
	}

	buf.Reset()
	if err := Render(&buf, FormatCSV, tb); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "metric,p50_ms\nttfp,12.5\ne2e,900\n"; got != want {
		t.Errorf("csv = %q, want %q", got, want)
	}

	if err := Render(&buf, "xml", tb); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("unknown format error = %v", err)
	}
}

func TestFormatValue(t *testing.T) {
	cases := map[float64]string{12345.6: "12346", 42: "42", 3: "3", 123.45: "123.5", 1.23456: "1.235", 0: "0", 0.0123456: "0.0123", 5.8e-12: "5.8e-12",
		1234.56: "1235", 126.2: "126.2", 12.345: "12.35", 1.5: "1.500", 0.777: "0.7770", 0.0001234: "0.000123", -3.5: "-3.500"}
	for v, want := range cases {
		if got := fv(v); got != want {
			t.Errorf("fv(%g) = %q, want %q", v, got, want)
		}
	}
}
