package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

func TestDescribeBuild(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "33f38cb0ca205a0d59e216ec6edb3ec0665d50de"
	for _, c := range []struct {
		name    string
		ldflags string
		info    *debug.BuildInfo
		want    string
	}{
		{"no build info", "dev", nil, "dev"},
		{"go build outside a checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"go build in a checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "dev (rev 33f38cb0ca20)"},
		{"pseudo-version, dirty tree", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201095356-33f38cb0ca20+dirty"}, Settings: vcs(rev, "true")},
			"dev (rev 33f38cb0ca20, modified)"},
		{"pseudo-version without VCS settings", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201095356-33f38cb0ca20"}}, "dev (rev 33f38cb0ca20)"},
		{"go install module@v1.2.0", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0"},
		{"release build with -X main.version", "1.3.0", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "1.3.0 (rev 33f38cb0ca20)"},
	} {
		if got := describeBuild(c.ldflags, c.info); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestVersionRecorded: --version prints the build's version, and a results
// file header records the same string.
func TestVersionRecorded(t *testing.T) {
	want := versionString()
	var out bytes.Buffer
	root := newRootCmd(want)
	root.SetOut(&out)
	root.SetArgs([]string{"--version"})
	if err := root.Execute(); err != nil || out.String() != "omnibench version "+want+"\n" {
		t.Errorf("--version: %q, %v", out.String(), err)
	}

	url := startRunSim(t, runSimConfig(t))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	stdout, stderr, code, err := execRun(t, "--url", url, "-n", "1", "--warmup", "0", "--out", path)
	if code != 0 {
		t.Fatalf("run: exit %d, %v\n%s", code, err, stderr)
	}
	h, _, err := results.ReadFile(path)
	if err != nil || h.Version != want {
		t.Errorf("results header version %q (%v), want %q", h.Version, err, want)
	}
	if !strings.Contains(stdout, "omnibench  "+want+"\n") {
		t.Errorf("report does not record the version %q:\n%s", want, stdout)
	}
}

// TestVersionOfCheckoutBuild builds the binary from a git checkout, as a
// developer does, and expects "dev" with the checkout's revision.
func TestVersionOfCheckoutBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	gitDir, err := exec.Command("git", "rev-parse", "--git-dir").Output()
	if err != nil {
		t.Skip("not in a git checkout")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("git rev-parse HEAD failed")
	}
	if fi, err := os.Stat(strings.TrimSpace(string(gitDir))); err != nil || !fi.IsDir() || strings.Contains(string(gitDir), "/worktrees/") {
		t.Skip("a git worktree: the go command stamps no VCS information there")
	}
	bin := filepath.Join(t.TempDir(), "omnibench")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	out, err := exec.Command(bin, "--version").Output()
	want := "omnibench version dev (rev " + strings.TrimSpace(string(head))[:12]
	if err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("--version = %q (%v), want prefix %q", out, err, want)
	}
}
