package webhooks_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The rules of the root's exported names, as doc.go states them: each
// serves an audience doc.go names it for, signatures name their
// interfaces, and every exported interface is consumed where it is named.

const modulePath = "github.com/hookinbox/webhooks"

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

// isOptionResult reports whether fn returns one of the option types: the
// options are named through their types in doc.go.
func isOptionResult(fn *ast.FuncDecl) bool {
	if fn.Type.Results == nil || len(fn.Type.Results.List) != 1 {
		return false
	}
	id, ok := fn.Type.Results.List[0].Type.(*ast.Ident)
	return ok && slices.Contains([]string{"ReceiverOption", "ProcessorOption", "SharedOption"}, id.Name)
}

// TestDocNamesEveryExportedName: doc.go's audience sections name every
// exported type, function and variable of the root (as a [Name] link),
// so that each is there for an audience doc.go tells how to use it.
// Constants are named through their types (Status…, Reason…) or their
// options (Default…), options through their types.
func TestDocNamesEveryExportedName(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{"# For hosts", "# For store authors", "# For verifier authors"} {
		if !strings.Contains(string(doc), "// "+section+"\n") {
			t.Errorf("doc.go has no section %q", section)
		}
	}
	_, files := rootFiles(t)
	var missing []string
	check := func(name string) {
		if ast.IsExported(name) && !strings.Contains(string(doc), "["+name+"]") {
			missing = append(missing, name)
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && !isOptionResult(d) {
					check(d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						check(s.Name.Name)
					case *ast.ValueSpec:
						if d.Tok == token.VAR {
							for _, n := range s.Names {
								check(n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("doc.go names no [%s]: say in the section of its audience (host, store author, verifier author) what it is for, or unexport it", strings.Join(missing, "], ["))
	}
}

// TestExportedSignaturesNameTheirInterfaces: no exported function, method
// or struct field takes or returns an interface written out in place; it
// names one, which says what it is and where else it is consumed.
func TestExportedSignaturesNameTheirInterfaces(t *testing.T) {
	t.Parallel()
	fset, files := rootFiles(t)
	anonymous := func(where string, fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			ast.Inspect(f.Type, func(n ast.Node) bool {
				if it, ok := n.(*ast.InterfaceType); ok && len(it.Methods.List) > 0 {
					t.Errorf("%s: %s has an unnamed interface %s: name it", fset.Position(it.Pos()), where, source(fset, it))
				}
				return true
			})
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !ast.IsExported(receiverName(d))) {
					continue
				}
				anonymous(d.Name.Name, d.Type.Params)
				anonymous(d.Name.Name, d.Type.Results)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() {
						continue
					}
					if st, ok := ts.Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							if len(field.Names) == 0 || field.Names[0].IsExported() {
								anonymous(ts.Name.Name+" field", &ast.FieldList{List: []*ast.Field{field}})
							}
						}
					}
				}
			}
		}
	}
}

func receiverName(fn *ast.FuncDecl) string {
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func source(fset *token.FileSet, n ast.Node) string {
	b, err := os.ReadFile(fset.Position(n.Pos()).Filename)
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset])), " ")
}

// TestExportedInterfacesAreConsumed: every exported interface of the root
// is consumed somewhere in the module, outside tests: a parameter or a
// field of its type, an interface that embeds it, or a type assertion
// that looks for it. An interface nothing takes is a contract nobody
// holds anyone to.
func TestExportedInterfacesAreConsumed(t *testing.T) {
	t.Parallel()
	_, files := rootFiles(t)
	var interfaces []string
	for _, f := range files {
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok {
				for _, s := range gd.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.IsExported() {
						if _, ok := ts.Type.(*ast.InterfaceType); ok {
							interfaces = append(interfaces, ts.Name.Name)
						}
					}
				}
			}
		}
	}
	consumed := make(map[string]bool)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || exists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir // hidden, test data, or another module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for name := range consumedIn(f, filepath.Dir(path) == ".") {
			consumed[name] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range interfaces {
		if !consumed[name] {
			t.Errorf("nothing in the module takes a webhooks.%s (a parameter, a field, an embedding interface or a type assertion): consume it where a concrete type is taken, or remove it", name)
		}
	}
}

// consumedIn returns the root's type names that f consumes: in parameter
// and field types, embedded in interfaces, and in type assertions and
// type switches. root says that f is in the root package, whose names are
// not qualified.
func consumedIn(f *ast.File, root bool) map[string]bool {
	qualifier := ""
	if !root {
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == modulePath {
				qualifier = "webhooks"
				if imp.Name != nil {
					qualifier = imp.Name.Name
				}
			}
		}
		if qualifier == "" {
			return nil
		}
	}
	out := make(map[string]bool)
	names := func(typ ast.Expr) {
		ast.Inspect(typ, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				if root {
					out[n.Name] = true
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && !root && x.Name == qualifier {
					out[n.Sel.Name] = true
				}
				return false
			}
			return true
		})
	}
	fields := func(fl *ast.FieldList) {
		if fl != nil {
			for _, f := range fl.List {
				names(f.Type)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncType:
			fields(n.Params)
		case *ast.StructType:
			fields(n.Fields)
		case *ast.InterfaceType:
			for _, m := range n.Methods.List {
				if len(m.Names) == 0 {
					names(m.Type) // embedded
				}
			}
		case *ast.TypeAssertExpr:
			if n.Type != nil {
				names(n.Type)
			}
		case *ast.TypeSwitchStmt:
			for _, c := range n.Body.List {
				for _, typ := range c.(*ast.CaseClause).List {
					names(typ)
				}
			}
		}
		return true
	})
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
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
