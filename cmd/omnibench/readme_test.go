package main

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the repository's root as seen from this package's directory.
var repoRoot = filepath.Join("..", "..")

// manualPages lists the Markdown files of the user documentation, relative
// to the repository root and slash-separated: README.md and every page
// under docs/.
func manualPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(repoRoot, p)
			if err != nil {
				return err
			}
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 10 {
		t.Fatalf("found only %q: the manual under docs/ is missing", pages)
	}
	return pages
}

// TestREADMEPathsExist: every repository path the README and the pages
// under docs/ name exists. A link target is resolved against the page's
// directory; a `quoted` path that starts at a top-level directory, or a
// quoted Markdown file name, against the repository root.
func TestREADMEPathsExist(t *testing.T) {
	top := map[string]bool{}
	entries, err := os.ReadDir(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" {
			top[e.Name()] = true
		}
	}
	for _, page := range manualPages(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, target := range linkTargets(string(data)) {
			if file, _, _ := strings.Cut(target, "#"); file != "" {
				paths = append(paths, path.Join(path.Dir(page), file))
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
		if page == "README.md" && len(paths) < 3 {
			t.Fatalf("found only %q in the README: the extraction is broken", paths)
		}
		for _, p := range paths {
			if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(p))); err != nil {
				t.Errorf("%s names %s, which is not in the repository", page, p)
			}
		}
	}
}

// TestManualAnchorsExist: every link with a #fragment, within a page or to
// another Markdown page, names a heading that page has, so a section that
// moves between pages cannot leave a dead link behind.
func TestManualAnchorsExist(t *testing.T) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(page)))
		if err != nil {
			return nil // TestREADMEPathsExist reports the missing page
		}
		anchors[page] = headingAnchors(string(data))
		return anchors[page]
	}
	checked := 0
	for _, page := range manualPages(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range linkTargets(string(data)) {
			file, fragment, ok := strings.Cut(target, "#")
			if !ok || (file != "" && !strings.HasSuffix(file, ".md")) {
				continue
			}
			dest := page
			if file != "" {
				dest = path.Join(path.Dir(page), file)
			}
			if a := anchorsOf(dest); a != nil && !a[fragment] {
				t.Errorf("%s links to %s#%s, which has no such heading", page, dest, fragment)
			}
			checked++
		}
	}
	if checked < 5 {
		t.Fatalf("checked only %d anchored links: the extraction is broken", checked)
	}
}

// TestREADMEIsAFrontPage: the README stays a front page; the detail lives
// under docs/.
func TestREADMEIsAFrontPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 400 {
		t.Errorf("README.md has %d lines; keep it at most 400 and move detail to a page under docs/", n)
	}
}

// linkTargets returns the targets of the Markdown links and images in text
// that point inside the repository (no scheme), outside code blocks.
func linkTargets(text string) []string {
	var targets []string
	for _, m := range regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllStringSubmatch(proseOnly(text), -1) {
		if !strings.Contains(m[1], "://") && !strings.HasPrefix(m[1], "mailto:") {
			targets = append(targets, m[1])
		}
	}
	return targets
}

// proseOnly blanks the fenced code blocks of a Markdown text.
func proseOnly(text string) string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text: lower case, punctuation other than '-' and '_' removed,
// spaces turned into '-', and "-N" appended to the Nth repeat.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(proseOnly(text), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			anchors[anchor+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[anchor] = true
		}
		seen[anchor]++
	}
	return anchors
}
