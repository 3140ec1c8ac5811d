// Package readme checks that every Go snippet in the repository's README
// compiles against the current API, so the README cannot drift from the code.
package readme

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// imports maps the package names README snippets use to their import paths.
var imports = map[string]string{
	"context":      "context",
	"errors":       "errors",
	"fmt":          "fmt",
	"http":         "net/http",
	"httptest":     "net/http/httptest",
	"log":          "log",
	"os":           "os",
	"slog":         "log/slog",
	"testing":      "testing",
	"time":         "time",
	"url":          "net/url",
	"pgx":          "github.com/jackc/pgx/v5",
	"pgxpool":      "github.com/jackc/pgx/v5/pgxpool",
	"webhooks":     "github.com/hookinbox/webhooks",
	"memstore":     "github.com/hookinbox/webhooks/memstore",
	"pgstore":      "github.com/hookinbox/webhooks/pgstore",
	"providers":    "github.com/hookinbox/webhooks/providers",
	"webhookstest": "github.com/hookinbox/webhooks/webhookstest",
	"storetest":    "github.com/hookinbox/webhooks/storetest",
	"ops":          "github.com/hookinbox/webhooks/ops",
	"admin":        "github.com/hookinbox/webhooks/admin",
	"otelwebhooks": "github.com/hookinbox/webhooks/otelwebhooks",
}

// prelude declares what fragments may use without declaring it: the names
// the README's prose introduces.
const prelude = `package snippets

import (
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/pgstore"
)

// newMyStore stands for a store author's constructor.
func newMyStore(*testing.T) webhooks.InboxStore { return memstore.NewInbox() }

var (
	ctx       context.Context
	t         *testing.T
	pool      *pgxpool.Pool
	store     *pgstore.Store
	registry  *webhooks.Registry
	mux       *webhooks.Mux
	receiver  *webhooks.Receiver
	processor *webhooks.Processor
	httpMux   *http.ServeMux
	secret    string
	body      []byte

	// docs/operations.md: the host's own authentication and telemetry.
	operatorFromSession func(*http.Request) string
	requireOperator     func(http.Handler) http.Handler
	meterProvider       metric.MeterProvider
	tracerProvider      trace.TracerProvider

	// docs/postgresql.md: a pool through PgBouncer and one straight to
	// PostgreSQL.
	pooled, direct *pgxpool.Pool

	// docs/handlers.md: three handlers' muxes and a ledger's write.
	ledgerMux, auditMux, crmMux *webhooks.Mux
	applyToLedger       func(context.Context, []byte) error
)
`

var fence = regexp.MustCompile("(?s)```go\n(.*?)```")

// snippetFiles are the Markdown files whose Go snippets must compile: the
// README and the pages under docs/ it links to.
func snippetFiles(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// TestReadmeSnippetsCompile compiles every ```go block of README.md and of
// docs/*.md: a block that starts with "package" as a file of its own
// package, any other as the body of a function in a package that declares
// the prelude's variables.
func TestReadmeSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the README's snippets with the go command; skipped with -short")
	}
	root := moduleRoot(t)
	dir, err := os.MkdirTemp(root, "_readme-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "prelude.go"), []byte(prelude), 0o644); err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	blocks, fragments := 0, 0
	for fi, name := range snippetFiles(t, root) {
		text, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		found := fence.FindAllSubmatchIndex(text, -1)
		if name == "README.md" && len(found) == 0 {
			t.Fatal("README.md has no ```go blocks; the pattern or the README changed")
		}
		for i, m := range found {
			blocks++
			src := string(text[m[2]:m[3]])
			line := bytes.Count(text[:m[0]], []byte("\n")) + 2
			id := fmt.Sprintf("%d_%d", fi, i)
			if strings.HasPrefix(strings.TrimSpace(src), "package ") {
				sub := filepath.Join(dir, "file"+id)
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				src = fmt.Sprintf("//line %s:%d\n", name, line) + src
				if err := os.WriteFile(filepath.Join(sub, "main.go"), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
				pkgs = append(pkgs, "./"+filepath.Base(dir)+"/"+filepath.Base(sub))
				continue
			}
			file, err := fragmentFile(id, name, line, src)
			if err != nil {
				t.Errorf("%s:%d: %v", name, line, err)
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, "fragment"+id+".go"), []byte(file), 0o644); err != nil {
				t.Fatal(err)
			}
			fragments++
		}
	}
	pkgs = append(pkgs, "./"+filepath.Base(dir))
	cmd := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("snippets do not compile:\n%s", out)
	}
	t.Logf("compiled %d blocks (%d fragments)", blocks, fragments)
}

// TestReadmeQuickStartIsTheProgram: the README's quick start is
// examples/quickstart, whose test runs it, so the program a reader copies
// is the one that was tested.
func TestReadmeQuickStartIsTheProgram(t *testing.T) {
	root := moduleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile(filepath.Join(root, "examples", "quickstart", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	_, want, ok := strings.Cut(string(program), "\npackage main\n")
	if !ok {
		t.Fatal("examples/quickstart/main.go has no package clause")
	}
	for _, b := range fence.FindAllSubmatch(readme, -1) {
		if _, got, ok := strings.Cut(string(b[1]), "package main\n"); ok && strings.HasPrefix(string(b[1]), "package main\n") {
			if got != want {
				t.Errorf("the README's quick start differs from examples/quickstart/main.go: copy the program into the README\nREADME:\n%s\nprogram:\n%s", got, want)
			}
			return
		}
	}
	t.Error("README.md shows no quick start program (a ```go block starting with package main)")
}

// fragmentFile wraps a fragment in a function (unless it is top-level
// declarations, such as a test function), imports the packages it names,
// and marks every variable it declares at its top level as used.
func fragmentFile(id, name string, line int, src string) (string, error) {
	if t := strings.TrimSpace(src); strings.HasPrefix(t, "func ") || strings.HasPrefix(t, "type ") {
		return declarationsFile(name, line, src)
	}
	body := fmt.Sprintf("func fragment%s() {\n//line %s:%d\n%s\n}", id, name, line, src)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", "package snippets\n"+body, parser.SkipObjectResolution)
	if err != nil {
		return "", fmt.Errorf("not a Go statement list: %w", err)
	}
	fn := f.Decls[0].(*ast.FuncDecl)
	var declared []string
	for _, st := range fn.Body.List {
		switch s := st.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				for _, l := range s.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
						declared = append(declared, id.Name)
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, sp := range g.Specs {
					for _, id := range sp.(*ast.ValueSpec).Names {
						declared = append(declared, id.Name)
					}
				}
			}
		}
	}
	used := map[string]bool{}
	ast.Inspect(fn, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && imports[id.Name] != "" && !slices.Contains(declared, id.Name) {
				used[id.Name] = true
			}
		}
		return true
	})
	var b strings.Builder
	b.WriteString("package snippets\n\nimport (\n")
	for name := range used {
		fmt.Fprintf(&b, "\t%s %q\n", name, imports[name])
	}
	b.WriteString(")\n\n")
	b.WriteString(strings.TrimSuffix(body, "}"))
	for _, name := range declared {
		fmt.Fprintf(&b, "\t_ = %s\n", name)
	}
	b.WriteString("}\n")
	return b.String(), nil
}

// declarationsFile is a file of top-level declarations with the imports
// they name.
func declarationsFile(name string, line int, src string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", "package snippets\n"+src, parser.SkipObjectResolution)
	if err != nil {
		return "", fmt.Errorf("not Go declarations: %w", err)
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && imports[id.Name] != "" {
				used[id.Name] = true
			}
		}
		return true
	})
	var b strings.Builder
	b.WriteString("package snippets\n\nimport (\n")
	for name := range used {
		fmt.Fprintf(&b, "\t%s %q\n", name, imports[name])
	}
	fmt.Fprintf(&b, ")\n\n//line %s:%d\n%s\n", name, line, src)
	return b.String(), nil
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// getenvIntoPool is a connection string read from the environment and
// given to pgxpool unchecked.
var getenvIntoPool = regexp.MustCompile(`pgxpool\.New(WithConfig)?\([^)]*os\.Getenv\(`)

// TestReadmeSnippetsRefuseAnEmptyDatabaseURL: a snippet that reads the
// connection string from the environment stops when it is unset. pgx takes
// an empty string for "PostgreSQL's defaults" (the local socket, the user's
// own database), where Migrate would create the schema silently.
func TestReadmeSnippetsRefuseAnEmptyDatabaseURL(t *testing.T) {
	root := moduleRoot(t)
	others, err := filepath.Glob(filepath.Join(root, "*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range others {
		if others[i], err = filepath.Rel(root, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range append(snippetFiles(t, root), others...) {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range fence.FindAllSubmatch(b, -1) {
			src := string(block[1])
			line := bytes.Count(b[:bytes.Index(b, block[0])], []byte("\n")) + 2
			if m := getenvIntoPool.FindString(src); m != "" {
				t.Errorf("%s:%d: %s…: an unset variable connects to PostgreSQL's defaults; read it, and stop when it is empty", name, line, m)
			}
			if strings.Contains(src, `os.Getenv("DATABASE_URL")`) && !strings.Contains(src, `== ""`) {
				t.Errorf("%s:%d: the snippet reads DATABASE_URL without refusing an empty one", name, line)
			}
		}
	}
	// The Example functions hosts copy from godoc, by the same rule.
	examples, err := filepath.Glob(filepath.Join(root, "*", "example*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	top, err := filepath.Glob(filepath.Join(root, "example*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range append(top, examples...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, path)
		if m := getenvIntoPool.FindString(string(b)); m != "" {
			t.Errorf("%s: %s…: an unset variable connects to PostgreSQL's defaults; read it, and stop when it is empty", name, m)
		}
		if n, refused := strings.Count(string(b), `os.Getenv("DATABASE_URL")`), strings.Count(string(b), `dsn == ""`); n > refused {
			t.Errorf("%s: %d Examples read DATABASE_URL, %d refuse an empty one", name, n, refused)
		}
	}
}
