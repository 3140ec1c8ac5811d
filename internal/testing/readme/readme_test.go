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
)
`

var fence = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestReadmeSnippetsCompile compiles every ```go block of README.md: a block
// that starts with "package" as a file of its own package, any other as the
// body of a function in a package that declares the prelude's variables.
func TestReadmeSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the README's snippets with the go command; skipped with -short")
	}
	root := moduleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := fence.FindAllSubmatch(readme, -1)
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```go blocks; the pattern or the README changed")
	}
	dir, err := os.MkdirTemp(root, "_readme-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "prelude.go"), []byte(prelude), 0o644); err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	fragments := 0
	for i, b := range blocks {
		src := string(b[1])
		line := bytes.Count(readme[:bytes.Index(readme, b[0])], []byte("\n")) + 2
		if strings.HasPrefix(strings.TrimSpace(src), "package ") {
			sub := filepath.Join(dir, fmt.Sprintf("file%d", i))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			src = fmt.Sprintf("//line README.md:%d\n", line) + src
			if err := os.WriteFile(filepath.Join(sub, "main.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			pkgs = append(pkgs, "./"+filepath.Base(dir)+"/"+filepath.Base(sub))
			continue
		}
		file, err := fragmentFile(i, line, src)
		if err != nil {
			t.Errorf("README.md:%d: %v", line, err)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("fragment%d.go", i)), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		fragments++
	}
	pkgs = append(pkgs, "./"+filepath.Base(dir))
	cmd := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("README snippets do not compile:\n%s", out)
	}
	t.Logf("compiled %d README blocks (%d fragments)", len(blocks), fragments)
}

// fragmentFile wraps a fragment in a function (unless it is top-level
// declarations, such as a test function), imports the packages it names,
// and marks every variable it declares at its top level as used.
func fragmentFile(i, line int, src string) (string, error) {
	if t := strings.TrimSpace(src); strings.HasPrefix(t, "func ") || strings.HasPrefix(t, "type ") {
		return declarationsFile(line, src)
	}
	body := fmt.Sprintf("func fragment%d() {\n//line README.md:%d\n%s\n}", i, line, src)
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
func declarationsFile(line int, src string) (string, error) {
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
	fmt.Fprintf(&b, ")\n\n//line README.md:%d\n%s\n", line, src)
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
	for _, name := range []string{"README.md", filepath.Join("pgstore", "README.md"), filepath.Join("docs", "postgresql.md")} {
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
}
