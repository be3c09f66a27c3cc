package schemas

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// describedPackages are the packages, relative to the module root, whose
// types appear in the schemas and whose doc comments describe them.
var describedPackages = [...]string{"internal/run/results", "internal/run/runner", "internal/run/summary", "internal/run/selfmon", "report", "load", "stats", "internal/run/slo", "internal/schemas"}

// docComments reads the doc comments of the exported types and their
// fields in describedPackages under moduleRoot, keyed as
// "importpath.Type" and "importpath.Type.Field". A type's comment is its
// first paragraph; a field's is its doc comment, or its line comment when
// it has none.
func docComments(moduleRoot string) (map[string]string, error) {
	comments := map[string]string{}
	fset := token.NewFileSet()
	for _, pkg := range describedPackages {
		dir := filepath.Join(moduleRoot, filepath.FromSlash(pkg))
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("reading the doc comments of %s: %w", pkg, err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
			if err != nil {
				return nil, fmt.Errorf("reading the doc comments of %s: %w", pkg, err)
			}
			collectComments(f, modulePath+"/"+pkg, comments)
		}
	}
	return comments, nil
}

// collectComments adds the comments of f's exported types to comments.
func collectComments(f *ast.File, importPath string, comments map[string]string) {
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.TYPE {
			continue
		}
		for _, spec := range gen.Specs {
			ts := spec.(*ast.TypeSpec)
			if !ts.Name.IsExported() {
				continue
			}
			key := importPath + "." + ts.Name.Name
			text := ts.Doc.Text()
			if text == "" && len(gen.Specs) == 1 {
				text = gen.Doc.Text()
			}
			if para, _, _ := strings.Cut(text, "\n\n"); para != "" {
				comments[key] = oneLine(para)
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, field := range st.Fields.List {
				text := field.Doc.Text()
				if text == "" {
					text = field.Comment.Text()
				}
				for _, n := range field.Names {
					if n.IsExported() && text != "" {
						comments[key+"."+n.Name] = oneLine(text)
					}
				}
			}
		}
	}
}

// oneLine joins a comment's lines with spaces.
func oneLine(text string) string { return strings.Join(strings.Fields(text), " ") }

// lookupComment returns a reflector's LookupComment over comments.
func lookupComment(comments map[string]string) func(reflect.Type, string) string {
	return func(t reflect.Type, field string) string {
		key := t.PkgPath() + "." + t.Name()
		if field != "" {
			key += "." + field
		}
		return comments[key]
	}
}
