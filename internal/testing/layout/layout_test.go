// Package layout checks that the module's layout says what each package is:
// what ships in the library (everything but examples/, tools/ and
// internal/testing/), what is test support (internal/testing/), and what is
// tooling (tools/); and that the library's go.mod requires only what hosts
// compile, plus the test libraries.
package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// testLibraries are the modules go.mod may require beside those the
// shipped packages compile: the libraries the tests are written with, and
// the OpenTelemetry SDK that otelwebhooks' tests and the example server
// read their metrics and spans from.
var testLibraries = []string{
	"github.com/stretchr/testify",
	"go.opentelemetry.io/otel/sdk",
	"go.opentelemetry.io/otel/sdk/metric",
	"go.uber.org/goleak",
}

// thirdParty lists, per shipped package (by its path in the module), the
// modules outside the standard library it may import. Every other shipped
// package imports none: a host that uses neither PostgreSQL nor
// OpenTelemetry compiles no module beyond the standard library (and
// verification alone never does).
var thirdParty = map[string][]string{
	"pgstore":       {"github.com/google/uuid", "github.com/jackc/pgx/v5"},
	"cmd/hookinbox": {"github.com/jackc/pgx/v5"},
	"otelwebhooks":  {"go.opentelemetry.io/otel", "go.opentelemetry.io/otel/metric", "go.opentelemetry.io/otel/trace"},
}

// databaseEnv are the variables that name the test database; only the one
// PostgreSQL test helper reads them.
var databaseEnv = []string{"WEBHOOKS_TEST_DATABASE_URL", "WEBHOOKS_TEST_REQUIRE_DB"}

const pgtestDir = "internal/testing/pgtest"

// pkg is what go list says of a package.
type pkg struct {
	ImportPath     string
	Name           string
	Dir            string
	Standard       bool
	Imports        []string
	Deps           []string
	GoFiles        []string
	TestGoFiles    []string
	XTestGoFiles   []string
	IgnoredGoFiles []string
	Module         *struct {
		Path string
		Main bool
	}
	// rel is the package's directory relative to the module root, "." for
	// the root package.
	rel string
}

// kind is what a package of the module is, by where it lives.
type kind int

const (
	shipped     kind = iota // compiled into hosts (or the shipped command)
	example                 // examples/
	tooling                 // tools/
	testSupport             // internal/testing/
)

func (k kind) String() string {
	return [...]string{"shipped", "example", "tooling", "test support"}[k]
}

func kindOf(rel string) kind {
	switch {
	case under(rel, "examples"):
		return example
	case under(rel, "tools"):
		return tooling
	case under(rel, "internal/testing"):
		return testSupport
	}
	return shipped
}

// under reports whether rel is dir or inside it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

type module struct {
	path string
	root string
	pkgs []*pkg          // the module's own packages
	all  map[string]*pkg // every package they compile, by import path
}

var (
	loadOnce sync.Once
	loaded   module
	loadErr  error
)

// load lists the module's packages and everything they compile, once.
func load(t *testing.T) module {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = list() })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded
}

func list() (module, error) {
	var m module
	out, err := goCmd("", "list", "-m", "-f", "{{.Path}} {{.Dir}}")
	if err != nil {
		return m, err
	}
	var ok bool
	m.path, m.root, ok = strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok {
		return m, errors.New("layout: go list -m printed no directory")
	}
	out, err = goCmd(m.root, "list", "-deps",
		"-json=ImportPath,Name,Dir,Standard,Imports,Deps,GoFiles,TestGoFiles,XTestGoFiles,IgnoredGoFiles,Module", "./...")
	if err != nil {
		return m, err
	}
	m.all = map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(pkg)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return m, err
		}
		m.all[p.ImportPath] = p
		if p.Module != nil && p.Module.Main {
			rel, err := filepath.Rel(m.root, p.Dir)
			if err != nil {
				return m, err
			}
			p.rel = filepath.ToSlash(rel)
			m.pkgs = append(m.pkgs, p)
		}
	}
	return m, nil
}

func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New("layout: go " + strings.Join(args, " ") + ": " + err.Error() + ": " + stderr.String())
	}
	return out, nil
}

// TestCommandsLiveUnderCmdExamplesOrTools: a program is the shipped command
// (cmd/), a runnable host (examples/) or a maintainer's tool (tools/), and
// says so by where it lives.
func TestCommandsLiveUnderCmdExamplesOrTools(t *testing.T) {
	for _, p := range load(t).pkgs {
		if p.Name == "main" && !under(p.rel, "cmd") && !under(p.rel, "examples") && !under(p.rel, "tools") {
			t.Errorf("%s is a command: move it under tools/ (a maintainer's tool), examples/ (a runnable host) or cmd/ (a command that ships)", p.rel)
		}
	}
}

// TestInternalHoldsLibraryInternals: every package under internal/, but
// internal/testing/, is compiled into a shipped package; test support lives
// in internal/testing/, tooling in tools/.
func TestInternalHoldsLibraryInternals(t *testing.T) {
	m := load(t)
	used := map[string]bool{}
	for _, p := range m.pkgs {
		if kindOf(p.rel) == shipped && !under(p.rel, "internal") {
			for _, d := range p.Deps {
				used[d] = true
			}
		}
	}
	for _, p := range m.pkgs {
		if under(p.rel, "internal") && kindOf(p.rel) == shipped && !used[p.ImportPath] {
			t.Errorf("%s is under internal/ but no shipped package compiles it: test support goes under internal/testing/, tooling under tools/", p.rel)
		}
	}
}

// TestShippedPackagesCompileNoTestSupportOrTooling: what ships compiles
// nothing from examples/, tools/ or internal/testing/.
func TestShippedPackagesCompileNoTestSupportOrTooling(t *testing.T) {
	m := load(t)
	kinds := map[string]kind{}
	for _, p := range m.pkgs {
		kinds[p.ImportPath] = kindOf(p.rel)
	}
	for _, p := range m.pkgs {
		if kindOf(p.rel) != shipped {
			continue
		}
		for _, d := range p.Deps {
			if k, ok := kinds[d]; ok && k != shipped {
				t.Errorf("%s compiles %s, which is %s", p.rel, strings.TrimPrefix(d, m.path+"/"), k)
			}
		}
	}
}

// TestShippedPackagesImportOnlyTheirModules: a shipped package imports the
// standard library, this module and the modules thirdParty grants it.
func TestShippedPackagesImportOnlyTheirModules(t *testing.T) {
	m := load(t)
	for _, p := range m.pkgs {
		if kindOf(p.rel) != shipped {
			continue
		}
		for _, imp := range p.Imports {
			d := m.all[imp]
			if d == nil || d.Standard || d.Module == nil || d.Module.Main {
				continue
			}
			if !slices.Contains(thirdParty[p.rel], d.Module.Path) {
				t.Errorf("%s imports %s (module %s): a shipped package compiles only the standard library and the modules this test grants it (%v); use the standard library", p.rel, imp, d.Module.Path, thirdParty[p.rel])
			}
		}
	}
}

// TestModuleRequiresWhatHostsCompile: every module go.mod requires directly
// is compiled by a shipped package or is a test library. A module only an
// example, a tool or a test of its own needs (a browser driver, a container
// runner, an exporter) goes in a module of its own.
func TestModuleRequiresWhatHostsCompile(t *testing.T) {
	m := load(t)
	compiled := map[string]bool{}
	for _, p := range m.pkgs {
		if kindOf(p.rel) != shipped {
			continue
		}
		for _, d := range p.Deps {
			if dp := m.all[d]; dp != nil && dp.Module != nil {
				compiled[dp.Module.Path] = true
			}
		}
	}
	out, err := goCmd(m.root, "mod", "edit", "-json")
	if err != nil {
		t.Fatal(err)
	}
	var gomod struct {
		Require []struct {
			Path     string
			Indirect bool
		}
	}
	if err := json.Unmarshal(out, &gomod); err != nil {
		t.Fatal(err)
	}
	for _, r := range gomod.Require {
		if !r.Indirect && !compiled[r.Path] && !slices.Contains(testLibraries, r.Path) {
			t.Errorf("go.mod requires %s, which no shipped package compiles and is no test library: move what needs it into a module of its own", r.Path)
		}
	}
}

// TestOnePostgresTestHelper: the test database is found in one place,
// internal/testing/pgtest, which every PostgreSQL test uses.
func TestOnePostgresTestHelper(t *testing.T) {
	m := load(t)
	fset := token.NewFileSet()
	for _, p := range m.pkgs {
		if p.rel == pgtestDir || p.rel == "internal/testing/layout" {
			continue
		}
		for _, files := range [][]string{p.GoFiles, p.TestGoFiles, p.XTestGoFiles, p.IgnoredGoFiles} {
			for _, name := range files {
				f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
				if err != nil {
					t.Fatal(err)
				}
				ast.Inspect(f, func(n ast.Node) bool {
					lit, ok := n.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						return true
					}
					if s, err := strconv.Unquote(lit.Value); err == nil && slices.Contains(databaseEnv, s) {
						t.Errorf("%s reads %s: find the test database with %s (DSN, NewPool, NewSchema)", filepath.Join(p.rel, name), s, pgtestDir)
					}
					return true
				})
			}
		}
	}
}
