package readme

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	// inlineLink is a Markdown link or image, [text](target "title").
	inlineLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	// referenceLink is a link reference definition, [name]: target.
	referenceLink = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	// anyFence is a fenced code block of any language, whose text holds no
	// links.
	anyFence = regexp.MustCompile("(?s)```.*?```")
	// codeSpan is inline code, whose text holds no links either.
	codeSpan = regexp.MustCompile("`[^`\n]*`")
	// heading is an ATX heading outside code.
	heading = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
)

// TestMarkdownLinksResolve: every relative link in the repository's
// Markdown files (the README, docs/, the packages' pages) names a file or
// directory that exists, and every #fragment a heading of the page it
// points to, as GitHub renders it. A link to another site must be an
// absolute https URL; whether it answers is not checked here (CI has no
// network to ask).
func TestMarkdownLinksResolve(t *testing.T) {
	root := moduleRoot(t)
	pages := map[string]string{} // slash path from root → text without code blocks
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		pages[filepath.ToSlash(rel)] = anyFence.ReplaceAllString(string(b), "")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pages["README.md"]; !ok {
		t.Fatal("no README.md at the module's root")
	}
	checked := 0
	for page, text := range pages {
		text := codeSpan.ReplaceAllString(text, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, m := range referenceLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			checked++
			if msg := checkLink(root, page, target, pages); msg != "" {
				t.Errorf("%s: link %q: %s", page, target, msg)
			}
		}
	}
	t.Logf("checked %d links in %d pages", checked, len(pages))
}

// checkLink says what is wrong with a link from page, or "".
func checkLink(root, page, target string, pages map[string]string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		u, err := url.Parse(target)
		if err != nil || u.Scheme != "https" && u.Scheme != "mailto" || u.Scheme == "https" && u.Host == "" {
			return "a link to another site must be an absolute https URL"
		}
		return ""
	}
	file, fragment, _ := strings.Cut(target, "#")
	dest := page
	if file != "" {
		if strings.HasPrefix(file, "/") {
			return "an absolute path does not resolve on GitHub or in a checkout: make it relative"
		}
		file, err := url.PathUnescape(file)
		if err != nil {
			return "not a valid path: " + err.Error()
		}
		dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), file)))
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "leaves the repository"
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
			return "no such file or directory: " + dest
		}
	}
	if fragment == "" {
		return ""
	}
	text, ok := pages[dest]
	if !ok {
		if strings.HasSuffix(dest, ".go") && strings.HasPrefix(fragment, "L") {
			return "" // a line of a source file, as GitHub links it
		}
		return "a #fragment only resolves in a Markdown page"
	}
	if !headingAnchors(text)[fragment] {
		return "no heading of " + dest + " has the anchor #" + fragment
	}
	return ""
}

// headingAnchors are the anchors GitHub gives a page's headings: lower
// case, spaces as hyphens, other punctuation dropped, and -1, -2, … after
// a repeated one.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(text, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				// Letters, digits, hyphens and underscores stay; the
				// rest (backquotes, dots, slashes, …) go.
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}
