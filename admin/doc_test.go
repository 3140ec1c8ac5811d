package admin_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hookinbox/webhooks/internal/adminjson"
)

// jsonShapes are the objects of the API, by the names the package doc
// gives them.
var jsonShapes = map[string]reflect.Type{
	"Key":               reflect.TypeFor[adminjson.Key](),
	"Item":              reflect.TypeFor[adminjson.Item](),
	"ErrorRecord":       reflect.TypeFor[adminjson.ErrorRecord](),
	"Detail":            reflect.TypeFor[adminjson.Detail](),
	"Body":              reflect.TypeFor[adminjson.Body](),
	"Attempt":           reflect.TypeFor[adminjson.Attempt](),
	"Audit":             reflect.TypeFor[adminjson.Audit](),
	"Delivery":          reflect.TypeFor[adminjson.Delivery](),
	"Page":              reflect.TypeFor[adminjson.Page](),
	"Stats":             reflect.TypeFor[adminjson.Stats](),
	"Count":             reflect.TypeFor[adminjson.Count](),
	"More":              reflect.TypeFor[adminjson.More](),
	"ReplayRequest":     reflect.TypeFor[adminjson.ReplayRequest](),
	"BulkReplayRequest": reflect.TypeFor[adminjson.BulkReplayRequest](),
	"Filter":            reflect.TypeFor[adminjson.Filter](),
	"ReplayResult":      reflect.TypeFor[adminjson.ReplayResult](),
	"Replayed":          reflect.TypeFor[adminjson.Replayed](),
	"CloseRequest":      reflect.TypeFor[adminjson.CloseRequest](),
	"CloseResult":       reflect.TypeFor[adminjson.CloseResult](),
	"ErrorResponse":     reflect.TypeFor[adminjson.ErrorResponse](),
	"Job":               reflect.TypeFor[adminjson.Job](),
	"HandlerStats":      reflect.TypeFor[adminjson.HandlerStats](),
	"HeldKey":           reflect.TypeFor[adminjson.HeldKey](),
	"Pause":             reflect.TypeFor[adminjson.Pause](),
	"PauseRequest":      reflect.TypeFor[adminjson.PauseRequest](),
	"PauseResult":       reflect.TypeFor[adminjson.PauseResult](),
	"Scope":             reflect.TypeFor[adminjson.Scope](),
}

// documentedShapes reads the objects the package doc's JSON section lists:
// each name with its fields, "?" marking the fields left out when not
// set; a capitalized field is another object's fields, in place.
func documentedShapes(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "// # JSON\n")
	if start < 0 {
		t.Fatal("doc.go has no JSON section")
	}
	doc = doc[start:]
	if end := strings.Index(doc[1:], "\n// # "); end >= 0 {
		doc = doc[:end+1]
	}
	entries := make(map[string]string)
	var name string
	entry := regexp.MustCompile(`^//\t([A-Z][A-Za-z]*) +(.*)$`)
	more := regexp.MustCompile(`^//\t +(.*)$`)
	for line := range strings.SplitSeq(doc, "\n") {
		if m := entry.FindStringSubmatch(line); m != nil {
			name = m[1]
			entries[name] = m[2]
		} else if m := more.FindStringSubmatch(line); m != nil && name != "" {
			entries[name] += " " + m[1]
		} else {
			name = ""
		}
	}
	description := regexp.MustCompile(`\s*\([^)]*\)`)
	shapes := make(map[string][]string)
	for name, fields := range entries {
		for f := range strings.SplitSeq(description.ReplaceAllString(fields, ""), ",") {
			shapes[name] = append(shapes[name], strings.TrimSpace(f))
		}
	}
	return shapes
}

// expand replaces the objects named among fields by their fields.
func expand(shapes map[string][]string, fields []string) []string {
	var out []string
	for _, f := range fields {
		if inner, ok := shapes[f]; ok && f[0] >= 'A' && f[0] <= 'Z' {
			out = append(out, expand(shapes, inner)...)
		} else {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// encodedFields are the JSON fields of typ as encoding/json writes them,
// "?" after those it leaves out when not set.
func encodedFields(typ reflect.Type) []string {
	var out []string
	for f := range typ.Fields() {
		tag, hasTag := f.Tag.Lookup("json")
		if f.Anonymous && !hasTag {
			out = append(out, encodedFields(f.Type)...)
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
			name += "?"
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// TestDocumentedJSON: the JSON section of the package doc is the API's
// contract, and every object the API reads or writes is there with
// exactly the fields it has, and which of them may be left out.
func TestDocumentedJSON(t *testing.T) {
	t.Parallel()
	shapes := documentedShapes(t)
	for name, typ := range jsonShapes {
		fields, ok := shapes[name]
		if !ok {
			t.Errorf("doc.go's JSON section does not list %s", name)
			continue
		}
		if got, want := expand(shapes, fields), encodedFields(typ); !slices.Equal(got, want) {
			t.Errorf("doc.go lists %s as %q; it is encoded as %q", name, got, want)
		}
	}
	for name := range shapes {
		if _, ok := jsonShapes[name]; !ok {
			t.Errorf("doc.go lists %s, which the API does not have", name)
		}
	}
	// Every object of internal/adminjson is one the test knows.
	fset := token.NewFileSet()
	for _, path := range mustGlob(t, filepath.Join("..", "internal", "adminjson", "*.go")) {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, s := range gd.Specs {
					if name := s.(*ast.TypeSpec).Name.Name; ast.IsExported(name) && jsonShapes[name] == nil {
						t.Errorf("adminjson.%s is not in jsonShapes, so doc.go is not held to it", name)
					}
				}
			}
		}
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no files match %s: %v", pattern, err)
	}
	return paths
}

// TestExportsTheHandlerOnly: the package's API is the handler and its
// options; the JSON it reads and writes is documented, not exported as Go
// types mirroring package ops.
func TestExportsTheHandlerOnly(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	var types []string
	for _, path := range mustGlob(t, "*.go") {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, s := range gd.Specs {
					if name := s.(*ast.TypeSpec).Name.Name; ast.IsExported(name) {
						types = append(types, name)
					}
				}
			}
		}
	}
	slices.Sort(types)
	if want := []string{"Handler", "Option"}; !slices.Equal(types, want) {
		t.Errorf("package admin exports the types %q, want %q", types, want)
	}
}
