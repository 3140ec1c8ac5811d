package admin

import (
	"bytes"
	"embed"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/ops"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/admin.css
var css []byte

// contentSecurityPolicy allows the page nothing but its own stylesheet and
// forms: no script, no frame, no external asset.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

var funcs = template.FuncMap{
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "–"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"timeInput": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	},
	"age": func(seconds float64) string {
		return roundDuration(time.Duration(seconds * float64(time.Second))).String()
	},
	"took": func(start, end time.Time) string {
		if start.IsZero() || end.IsZero() {
			return "–"
		}
		return roundDuration(end.Sub(start)).String()
	},
	"clip": func(s string, n int) string {
		if len(s) <= n {
			return s
		}
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n] + "…"
	},
	"deref":  func(s *string) string { return *s },
	"pretty": indentJSON,
	"base64": base64.StdEncoding.EncodeToString,
}

var (
	indexPage = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/index.html"))
	itemPage  = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/item.html"))
	errorPage = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/error.html"))
)

// indentJSON returns a payload that is JSON indented for reading (its
// tokens, numbers among them, as they were sent), and any other as it is.
func indentJSON(s *string) string {
	if !json.Valid([]byte(*s)) {
		return *s
	}
	var b bytes.Buffer
	if json.Indent(&b, []byte(*s), "", "  ") != nil {
		return *s
	}
	return b.String()
}

// roundDuration keeps a duration readable: milliseconds below a second,
// seconds below an hour, minutes beyond.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Hour:
		return d.Round(time.Second)
	}
	return d.Round(time.Minute)
}

func serveCSS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	_, _ = w.Write(css)
}

// render executes a page template into a buffer first, so a failure is a
// clean 500 rather than half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, t *template.Template, data any) {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", data); err != nil {
		h.cfg.logger.ErrorContext(r.Context(), "admin: rendering a page failed", "path", r.URL.Path, "err", err)
		http.Error(w, "rendering the page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	w.Header().Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

type errorData struct {
	Title, Message string
}

// pageError answers an HTML error page.
func (h *Handler) pageError(w http.ResponseWriter, status int, msg string) {
	var buf bytes.Buffer
	if err := errorPage.ExecuteTemplate(&buf, "layout", errorData{Title: http.StatusText(status), Message: msg}); err != nil {
		http.Error(w, msg, status)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// pageStoreError answers an error of the store, or of the request, as a
// page.
func (h *Handler) pageStoreError(w http.ResponseWriter, r *http.Request, err error) {
	status, _ := statusOf(err)
	h.pageError(w, status, h.errorMessage(r, status, err))
}

type stateCount struct {
	Name string
	N    int64
}

type groupRow struct {
	Provider, EventType string
	N                   int64
	URL                 string
}

type itemRow struct {
	Item adminjson.Item
	At   time.Time // when it died, or was closed
	URL  string
}

type indexData struct {
	Title        string
	Stats        adminjson.Stats
	States       []stateCount
	Groups       []groupRow
	Filter       adminjson.Filter
	Closed       bool
	Limit        int
	MaxPageSize  int
	ErrorClasses []webhooks.FailureClass
	Items        []itemRow
	Filtered     bool
	Paged        bool
	NextURL      string
	FirstURL     string
}

// states is the order the page lists item states in.
var states = []webhooks.State{webhooks.StatePending, webhooks.StateLeased, webhooks.StateSucceeded, webhooks.StateDead, webhooks.StateClosed}

func (h *Handler) servePage(w http.ResponseWriter, r *http.Request) {
	l, err := parseListing(r.URL.Query())
	if err != nil {
		h.pageStoreError(w, r, err)
		return
	}
	now := h.cfg.clock.Now()
	st, err := h.store.Stats(r.Context(), ops.StatsRequest{Now: now})
	if err != nil {
		h.pageStoreError(w, r, err)
		return
	}
	page, err := h.store.List(r.Context(), l.query())
	if err != nil {
		h.pageStoreError(w, r, err)
		return
	}
	d := indexData{
		Title:        "Dead letters",
		Stats:        adminjson.NewStats(&st, now),
		Filter:       l.Filter,
		Closed:       l.State == webhooks.StateClosed,
		Limit:        l.Limit,
		MaxPageSize:  MaxPageSize,
		ErrorClasses: errorClasses,
		Filtered:     l.Filter != (adminjson.Filter{}),
		Paged:        l.After != "",
	}
	for _, s := range states {
		d.States = append(d.States, stateCount{Name: string(s), N: st.States[s]})
	}
	for _, c := range d.Stats.DeadLetters {
		d.Groups = append(d.Groups, groupRow{Provider: c.Provider, EventType: c.EventType, N: c.Count, URL: "./?" + url.Values{"provider": {c.Provider}, "event_type": {c.EventType}}.Encode()})
	}
	for i := range page.Items {
		it := &page.Items[i]
		at := it.DeadAt
		if d.Closed {
			at = it.ClosedAt
		}
		d.Items = append(d.Items, itemRow{Item: adminjson.SummaryItem(it), At: at, URL: itemURL(it.Key)})
	}
	v := l.values()
	d.FirstURL = "./?" + v.Encode()
	if page.Next != "" {
		v.Set("after", page.Next)
		d.NextURL = "./?" + v.Encode()
	}
	if d.Closed {
		d.Title = "Closed dead letters"
	}
	h.render(w, r, http.StatusOK, indexPage, d)
}

// itemURL is the page of one item, relative to the handler's prefix.
func itemURL(k webhooks.InboxKey) string {
	v := url.Values{"provider": {k.Provider}, "event_id": {k.EventID}}
	if k.Tenant != "" {
		v.Set("tenant", k.Tenant)
	}
	return "item?" + v.Encode()
}

type itemData struct {
	Title  string
	Detail adminjson.Detail
	// ReplayBody and ReplayCommand show how to replay a dead letter
	// through the API and the command line.
	ReplayBody, ReplayCommand string
}

func (h *Handler) serveItemPage(w http.ResponseWriter, r *http.Request) {
	key, err := parseKey(r.URL.Query())
	if err != nil {
		h.pageStoreError(w, r, err)
		return
	}
	d, err := h.store.Get(r.Context(), key)
	if err != nil {
		h.pageStoreError(w, r, err)
		return
	}
	title := key.Provider + " " + key.EventID
	if key.Tenant != "" {
		title = key.Provider + "/" + key.Tenant + " " + key.EventID
	}
	data := itemData{Title: title, Detail: adminjson.NewDetail(&d, h.cfg.payloads)}
	if d.State == webhooks.StateDead || d.State == webhooks.StateClosed || d.State == webhooks.StateSucceeded {
		body, _ := json.Marshal(adminjson.ReplayRequest{Key: adminjson.KeyOf(key), Reason: "…"})
		data.ReplayBody = string(body)
		data.ReplayCommand = "hookinbox replay -provider " + shellQuote(key.Provider)
		if key.Tenant != "" {
			data.ReplayCommand += " -tenant " + shellQuote(key.Tenant)
		}
		data.ReplayCommand += " -event-id " + shellQuote(key.EventID) + " -actor YOU -reason '…'"
	}
	h.render(w, r, http.StatusOK, itemPage, data)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/@+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
