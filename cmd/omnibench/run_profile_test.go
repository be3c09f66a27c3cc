package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestRunCmdProfiles: the hidden --cpuprofile and --memprofile flags write
// pprof files (gzip-compressed protobuf) once the run ended, and a profile
// path that cannot be created is unusable input. Not parallel: the CPU
// profiler is one per process.
func TestRunCmdProfiles(t *testing.T) {
	url := startRunSim(t, runSimConfig(t))
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	_, stderr, code, err := execRun(t, "--url", url, "-n", "2", "--settle", "0", "--cpuprofile", cpu, "--memprofile", mem)
	if code != 0 {
		t.Fatalf("exit %d (%v)\nstderr:\n%s", code, err, stderr)
	}
	for _, path := range []string{cpu, mem} {
		data, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			t.Errorf("%s: %d bytes, err %v; want a gzip-compressed profile", filepath.Base(path), len(data), err)
		}
	}
	_, _, code, err = execRun(t, "--url", url, "-n", "1", "--cpuprofile", filepath.Join(dir, "missing", "cpu.pprof"))
	if code != 2 {
		t.Errorf("--cpuprofile in a missing directory: exit %d (%v), want 2", code, err)
	}
}
