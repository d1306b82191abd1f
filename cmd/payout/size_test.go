package main_test

import (
	"go/ast"
	"go/parser"
	"go/token"
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

// sizeCheckedDirs are the packages held to the limits, relative to the module root.
var sizeCheckedDirs = []string{"api", "api/sandbox", "cmd/payout", "ledger", "ledger/ledgertest", "templates",
	"batch", "batch/read", "batch/callbacks", "batch/reconcile", "batch/watch", "batch/report", "batch/atomicfile",
	"batch/lookup"}

func TestProductionCodeStaysShort(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range sizeCheckedDirs {
		paths, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checked++
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
	}
	if checked < 20 {
		t.Fatalf("checked only %d files: is the test run from cmd/payout?", checked)
	}
}
