package exposition

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzValidate holds the scanner to three properties on any input: it
// never panics, every violation names a line of the input, and whatever it
// accepts as text format, expfmt's text parser accepts too.
func FuzzValidate(f *testing.F) {
	for path, format := range realWorld(f) {
		body, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(format), body)
	}
	invalid, _ := filepath.Glob(filepath.Join(corpus, "invalid", "*"))
	for _, path := range invalid {
		if filepath.Base(path) == "EXPECT" {
			continue
		}
		body, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(formatOf(f, path)), body)
	}
	f.Fuzz(func(t *testing.T, sel uint8, body []byte) {
		format := Format(sel % 2)
		res := Validate(body, format)
		for _, v := range res.Violations {
			if v.Line < 1 || v.Line > res.Lines || v.Rule == "" {
				t.Fatalf("violation outside the input's %d lines: %+v", res.Lines, v)
			}
		}
		if format == Text && len(res.Violations) == 0 {
			if err := expfmtAccepts(body); err != nil {
				t.Fatalf("accepted, but expfmt says: %v\n%q", err, body)
			}
		}
	})
}
