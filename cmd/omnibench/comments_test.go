package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Citations a Go comment may not make: documents that are not in the
// repository. The protocol reference lives under docs/reference/.
var outsideDocument = regexp.MustCompile(`(?i)protocol (section|§)|design[- ]document|websocket (reference|notes)|reference section|the protocol's`)

// A numbered section: the word section (or sections) or the sign §, then a
// number with optional dotted parts.
var sectionRef = regexp.MustCompile(`(?i)(\bsections?\s+|§\s*)(\d+(?:\.\d+)*)`)

// A repository document (a Markdown page under docs/, or the top-level
// README or ARCHITECTURE page) and the section number that may follow it.
var docsRef = regexp.MustCompile(`\b((?:docs/[\w./-]+|README|ARCHITECTURE)\.md)(?:,?\s+(?:sections?\s+|§\s*)(\d+(?:\.\d+)*))?`)

// A citation of the top-level README by a quoted heading, or by a section
// named in words.
var (
	readmeHeading = regexp.MustCompile(`README(?:\.md)?(?:'s)?\s*\(?\s*"([^"]*)"`)
	readmeSection = regexp.MustCompile(`README(?:\.md)?(?:'s)?\s+(?:\w+\s+){0,2}section`)
)

// Standards and outside specifications a comment may cite by section.
var publicStandard = regexp.MustCompile(`\b(RFC\s*\d+|XML\s+1\.\d|WHATWG|HTML)\b`)

// TestCommentCitationsResolve: every document a Go comment cites is in the
// repository, and every section it names exists there. A comment that cites
// the outside protocol notes or metrics design by section points at a
// document nobody can open; it must cite the page under docs/ that holds the
// fact.
func TestCommentCitationsResolve(t *testing.T) {
	headings := map[string]map[string]bool{} // file -> section numbers and titles
	headingsOf := func(doc string) map[string]bool {
		if h, ok := headings[doc]; ok {
			return h
		}
		data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(doc)))
		if err != nil {
			headings[doc] = nil
			return nil
		}
		headings[doc] = sectionHeadings(string(data))
		return headings[doc]
	}
	files := 0
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, group := range f.Comments {
			where := fset.Position(group.Pos())
			rel, _ := filepath.Rel(repoRoot, where.Filename)
			at := filepath.ToSlash(rel) + ":" + strconv.Itoa(where.Line)
			for _, problem := range citationProblems(group.Text(), headingsOf) {
				t.Errorf("%s: %s", at, problem)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read only %d Go files: the walk is broken", files)
	}
}

// citationProblems returns what is wrong with the citations in one comment:
// an outside document, a section with no document before it, a cited
// repository document or section that does not exist.
func citationProblems(comment string, headingsOf func(doc string) map[string]bool) []string {
	text := strings.Join(strings.Fields(comment), " ")
	var problems []string
	if m := outsideDocument.FindString(text); m != "" {
		problems = append(problems, `cites "`+m+`", a document outside the repository: cite the page under docs/reference/ that holds the fact`)
	}
	cited := map[int]bool{} // start offsets of sections that follow a cited document
	for _, m := range docsRef.FindAllStringSubmatchIndex(text, -1) {
		doc := text[m[2]:m[3]]
		h := headingsOf(doc)
		if h == nil {
			problems = append(problems, "cites "+doc+", which is not in the repository")
			continue
		}
		if m[4] >= 0 {
			section := text[m[4]:m[5]]
			cited[m[4]] = true
			if !h[section] {
				problems = append(problems, "cites "+doc+" section "+section+", which that page does not have")
			}
		}
	}
	for _, m := range sectionRef.FindAllStringSubmatchIndex(text, -1) {
		if cited[m[4]] {
			continue
		}
		before := text[max(0, m[0]-100):m[0]]
		if !strings.Contains(before, ".md") && !publicStandard.MatchString(before) {
			problems = append(problems, `names "`+text[m[0]:m[1]]+`" without the document it belongs to: cite docs/<page>.md, section N`)
		}
	}
	for _, m := range readmeHeading.FindAllStringSubmatch(text, -1) {
		if !headingsOf("README.md")[m[1]] {
			problems = append(problems, `cites README heading "`+m[1]+`", which README.md does not have: cite the page under docs/`)
		}
	}
	if readmeSection.MatchString(text) {
		problems = append(problems, "cites a README section by name: cite the page under docs/ instead")
	}
	return problems
}

// sectionHeadings returns the headings of a Markdown text by title and, for
// numbered headings ("## 2. Streaming chat", "### 2.3 Chunks"), by number.
func sectionHeadings(text string) map[string]bool {
	numbered := regexp.MustCompile(`^(\d+(?:\.\d+)*)\.?\s`)
	h := map[string]bool{}
	for _, line := range strings.Split(proseOnly(text), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		h[title] = true
		if m := numbered.FindStringSubmatch(title); m != nil {
			h[m[1]] = true
		}
	}
	return h
}

// TestCitationProblems: the checker itself, on citations it must accept and
// refuse.
func TestCitationProblems(t *testing.T) {
	pages := map[string]map[string]bool{
		"docs/reference/websocket.md": {"2": true, "2.7": true},
		"README.md":                   {"Exit status": true},
	}
	headingsOf := func(doc string) map[string]bool { return pages[doc] }
	for comment, want := range map[string]int{
		"Errors as docs/reference/websocket.md, section 2.7 lists them.":     0,
		"docs/reference/websocket.md\n// section 2 describes the lifecycle.": 0,
		"The Ogg mapping (RFC 7845 section 5.1).":                            0,
		`The contract of README.md ("Exit status").`:                         0,
		"The never-pausing player of protocol section 7.":                    2, // outside document, section without one
		"As the design document says.":                                       1,
		"The order of section 9.4.4 per turn.":                               1,
		"docs/reference/websocket.md, section 9.4":                           1, // no such section
		"docs/reference/missing.md":                                          1,
		`Explained in the README ("Time to first audible audio").`:           1,
		"See the README speed section.":                                      1,
	} {
		if got := citationProblems(comment, headingsOf); len(got) != want {
			t.Errorf("%q: %d problems %q, want %d", comment, len(got), got, want)
		}
	}
}
