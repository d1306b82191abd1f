package main_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Production files and functions are kept short enough to be read in one sitting; a part that
// outgrows the limit is split by what its pieces do.
const (
	maxFileLines = 500
	maxFuncLines = 80
)

func TestProductionCodeStaysShort(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	// Every package of the module is held to them: a walk of its tree, not a list that new
	// packages could be left out of.
	var paths []string
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != filepath.Join("..", "..") && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(src), "\n"); n > maxFileLines {
			t.Errorf("%s: %d lines, more than %d: split it by what its parts do", path, n, maxFileLines)
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if n > maxFuncLines {
				t.Errorf("%s: func %s: %d lines, more than %d: split it into named steps", path, fd.Name.Name, n, maxFuncLines)
			}
		}
	}
	if len(paths) < 200 {
		t.Fatalf("found only %d files: is the test run from cmd/payout?", len(paths))
	}
}
