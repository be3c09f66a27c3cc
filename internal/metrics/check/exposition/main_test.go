package exposition

import (
	"flag"
	"os"
	"testing"
)

// fuzzMinimizeTime bounds how long the fuzzer minimizes each input that
// found new code, unless -fuzzminimizetime says otherwise. Its default of
// 60 s took whole -fuzztime runs on a loaded machine: minimizing runs the
// target thousands of times while nothing new is tried.
const fuzzMinimizeTime = "2s"

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.fuzzminimizetime" })
	if !given {
		if err := flag.Set("test.fuzzminimizetime", fuzzMinimizeTime); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
