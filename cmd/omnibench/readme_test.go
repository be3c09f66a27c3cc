package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEPathsExist: every repository path the README names (a link
// target, or a `quoted` path that starts at a top-level directory or names
// a Markdown file) exists in the repository.
func TestREADMEPathsExist(t *testing.T) {
	repo := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" {
			top[e.Name()] = true
		}
	}
	var paths []string
	for _, m := range regexp.MustCompile(`\]\(([^)#\s]+)\)`).FindAllStringSubmatch(string(data), -1) {
		if !strings.Contains(m[1], "://") {
			paths = append(paths, m[1])
		}
	}
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(string(data), -1) {
		for _, tok := range strings.Fields(m[1]) {
			tok = strings.TrimLeft(strings.TrimRight(tok, `.,;:()"'`), `("'`)
			first, _, nested := strings.Cut(tok, "/")
			switch {
			case strings.Contains(tok, "://") || strings.ContainsAny(tok, "*<>{}$="):
			case nested && top[first]:
				paths = append(paths, tok)
			case !nested && strings.HasSuffix(tok, ".md"):
				paths = append(paths, tok)
			}
		}
	}
	if len(paths) < 3 {
		t.Fatalf("found only %q in the README: the extraction is broken", paths)
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(repo, filepath.FromSlash(p))); err != nil {
			t.Errorf("README names %s, which is not in the repository", p)
		}
	}
}
