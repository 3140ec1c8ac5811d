package webhooks_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// rootFiles parses the root package's non-test files.
func rootFiles(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	return fset, files
}

// TestRootNamesNoProvider: the root names no provider's header: each
// verifier declares its own secret headers (SecretHeaderVerifier), and
// package providers holds every provider's names.
func TestRootNamesNoProvider(t *testing.T) {
	t.Parallel()
	names := regexp.MustCompile(`(?i)^"[a-z0-9-]*(gitlab|github|hub-|stripe|slack|shopify|twilio|svix)[a-z0-9-]*"$`)
	fset, files := rootFiles(t)
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && names.MatchString(lit.Value) {
				t.Errorf("%s: the root names a provider in %s: let the provider's verifier declare it", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
	}
}
