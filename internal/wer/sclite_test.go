package wer

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sclitePath finds NIST's sclite: on the PATH, or where Debian's sctk
// package puts it (its /usr/bin/sctk is a dispatcher).
func sclitePath() string {
	if p, err := exec.LookPath("sclite"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/lib/sctk/bin/sclite"); err == nil {
		return "/usr/lib/sctk/bin/sclite"
	}
	return ""
}

// TestSclite: on 400 seeded random pairs (among them pairs where sclite's
// weights count more errors than Levenshtein), the word and character
// counts equal those sclite reports for each utterance.
func TestSclite(t *testing.T) {
	bin := sclitePath()
	if bin == "" {
		t.Skip("sclite not installed (Debian package sctk): the arithmetic is checked against testdata/sclite_golden.txt only")
	}
	pairs := randomPairs(400)
	pairs = append(pairs, [2][]string{words("a a a b c"), words("b c c b")}, [2][]string{words("a b c"), nil})
	wordCounts := runSclite(t, bin, pairs, false)
	charCounts := runSclite(t, bin, pairs, true)
	table := make([]golden, len(pairs))
	var a Aligner
	differ := 0
	for i, p := range pairs {
		table[i] = golden{strings.Join(p[0], " "), strings.Join(p[1], " "), wordCounts[i], charCounts[i]}
		if w, _ := a.Words(p[0], p[1]); w.Errors() != levenshtein(p[0], p[1]) {
			differ++
		}
	}
	if differ == 0 {
		t.Error("no pair where sclite's alignment counts more errors than Levenshtein: the test would not tell them apart")
	}
	checkPairs(t, table)
	if *updateGolden {
		if err := writeGolden(goldenPath, append(table[:60:60], table[len(table)-2:]...)); err != nil {
			t.Fatal(err)
		}
	}
}

// runSclite scores the pairs with sclite (characters with -c) and returns
// each utterance's counts from its per-utterance report.
func runSclite(t *testing.T, bin string, pairs [][2][]string, chars bool) []Counts {
	t.Helper()
	dir := t.TempDir()
	var ref, hyp bytes.Buffer
	for i, p := range pairs {
		fmt.Fprintf(&ref, "%s (spk_%04d)\n", strings.Join(p[0], " "), i)
		fmt.Fprintf(&hyp, "%s (spk_%04d)\n", strings.Join(p[1], " "), i)
	}
	refPath, hypPath := filepath.Join(dir, "ref.trn"), filepath.Join(dir, "hyp.trn")
	for path, b := range map[string][]byte{refPath: ref.Bytes(), hypPath: hyp.Bytes()} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-r", refPath, "trn", "-h", hypPath, "trn", "-i", "rm", "-o", "pra", "stdout"}
	if chars {
		args = append(args, "-c")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		t.Fatalf("sclite %s: %v", strings.Join(args, " "), err)
	}
	counts, err := parsePra(out, len(pairs))
	if err != nil {
		t.Fatalf("sclite's report: %v", err)
	}
	return counts
}

// parsePra reads the "id: (spk_NNNN)" and "Scores: (#C #S #D #I) c s d i"
// lines of sclite's pra report.
func parsePra(out []byte, n int) ([]Counts, error) {
	counts := make([]Counts, n)
	seen := make([]bool, n)
	id := -1
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if _, err := fmt.Sscanf(line, "id: (spk_%d)", &id); err == nil {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "Scores: (#C #S #D #I) "); ok {
			if id < 0 || id >= n {
				return nil, fmt.Errorf("scores for unknown utterance %d", id)
			}
			c := &counts[id]
			if _, err := fmt.Sscan(rest, &c.Correct, &c.Substitutions, &c.Deletions, &c.Insertions); err != nil {
				return nil, fmt.Errorf("utterance %d: %q: %w", id, line, err)
			}
			seen[id] = true
		}
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("no scores for utterance %d", i)
		}
	}
	return counts, nil
}
