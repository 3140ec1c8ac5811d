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
	"clip":  clip,
	"deref": func(s *string) string { return *s },
	// handler names a handler for the page: its name, "default", or
	// "every handler" for a pause's webhooks.EveryHandler.
	"handler": func(name string) string {
		switch name {
		case "":
			return "default"
		case webhooks.EveryHandler:
			return "every handler"
		}
		return clip(name, 64)
	},
	// scope describes a pause's scope: "every job" for none.
	"scope":  func(s adminjson.Scope) string { return clip(s.PauseScope().String(), 160) },
	"pretty": indentJSON,
	"base64": base64.StdEncoding.EncodeToString,
}

var (
	indexPage = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/index.html"))
	itemPage  = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/item.html"))
	errorPage = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/error.html"))
)

// clip cuts s to at most n bytes, at a rune's start, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

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
	Handler, Provider, EventType string
	N                            int64
	URL                          string
}

type itemRow struct {
	Item adminjson.Item
	At   time.Time // when it died, or was closed
	URL  string
	// OvertookURL is the page of the dead letter the job ran past.
	OvertookURL string
}

type handlerRow struct {
	Stats  adminjson.HandlerStats
	States []stateCount
	URL    string // its dead letters
}

type heldKeyRow struct {
	Key              adminjson.HeldKey
	HeadURL, NextURL string
	HandlerURL       string
}

type indexData struct {
	Title string
	// Pause is set when the request may pause and resume handlers.
	Pause  *pauseForms
	Stats  adminjson.Stats
	States []stateCount
	Groups []groupRow
	// Named is set when the inbox has named handlers: the page shows
	// handlers then.
	Named         bool
	Handlers      []handlerRow
	HandlerStates []string
	HeldKeys      []heldKeyRow
	Filter        adminjson.Filter
	Closed        bool
	Limit         int
	MaxPageSize   int
	ErrorClasses  []webhooks.FailureClass
	Items         []itemRow
	Filtered      bool
	Paged         bool
	NextURL       string
	FirstURL      string
}

// states is the order the page lists item states in.
var states = []webhooks.State{webhooks.StatePending, webhooks.StateWaiting, webhooks.StateLeased, webhooks.StateSucceeded, webhooks.StateDead, webhooks.StateClosed}

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
	d.Pause = h.pauseFormsFor(r, &d.Stats)
	for _, s := range states {
		d.States = append(d.States, stateCount{Name: string(s), N: st.States[s]})
	}
	for _, hs := range st.Handlers {
		d.Named = d.Named || hs.Handler != ""
	}
	for i := range page.Items {
		d.Named = d.Named || page.Items[i].Handler != ""
	}
	for _, c := range d.Stats.DeadLetters {
		v := url.Values{"provider": {c.Provider}, "event_type": {c.EventType}}
		setHandler(v, c.Handler, d.Named)
		d.Groups = append(d.Groups, groupRow{Handler: c.Handler, Provider: c.Provider, EventType: c.EventType, N: c.Count, URL: "./?" + v.Encode()})
	}
	for _, s := range handlerStates {
		d.HandlerStates = append(d.HandlerStates, string(s))
	}
	for _, hs := range d.Stats.Handlers {
		row := handlerRow{Stats: hs, URL: "./?" + handlerValues(hs.Handler).Encode()}
		for _, s := range handlerStates {
			row.States = append(row.States, stateCount{Name: string(s), N: hs.States[string(s)]})
		}
		d.Handlers = append(d.Handlers, row)
	}
	for _, k := range d.Stats.HeldKeys {
		row := heldKeyRow{Key: k, HandlerURL: "./?" + handlerValues(k.Handler).Encode(),
			HeadURL: itemURL(webhooks.InboxKey{Provider: k.Provider, Tenant: k.Tenant, EventID: k.HeadEventID}) + jobAnchor(k.Handler)}
		if k.NextEventID != "" {
			row.NextURL = itemURL(webhooks.InboxKey{Provider: k.Provider, Tenant: k.Tenant, EventID: k.NextEventID}) + jobAnchor(k.Handler)
		}
		d.HeldKeys = append(d.HeldKeys, row)
	}
	for i := range page.Items {
		it := &page.Items[i]
		at := it.DeadAt
		if d.Closed {
			at = it.ClosedAt
		}
		row := itemRow{Item: adminjson.SummaryItem(it), At: at, URL: itemURL(it.Key) + jobAnchor(it.Handler)}
		if it.Overtook != "" {
			row.OvertookURL = itemURL(webhooks.InboxKey{Provider: it.Key.Provider, Tenant: it.Key.Tenant, EventID: it.Overtook}) + jobAnchor(it.Handler)
		}
		d.Items = append(d.Items, row)
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

// handlerStates are the states the handlers' table counts (succeeded jobs
// are counted for the whole inbox only).
var handlerStates = []webhooks.State{webhooks.StatePending, webhooks.StateWaiting, webhooks.StateLeased, webhooks.StateDead, webhooks.StateClosed}

// handlerValues are the listing parameters selecting one handler's jobs.
func handlerValues(name string) url.Values {
	v := url.Values{}
	setHandler(v, name, true)
	return v
}

// setHandler adds the parameter selecting the handler name's jobs, when
// the inbox has named handlers.
func setHandler(v url.Values, name string, named bool) {
	switch {
	case !named:
	case name == "":
		v.Set("default_handler", "true")
	default:
		v.Set("handler", name)
	}
}

// jobAnchor is the fragment of a named handler's job's section on its
// item's page (the default handler's is the page's top). Handler names
// are plain (webhooks.CheckHandlerName), so they make valid IDs; the
// fragment is escaped anyway.
func jobAnchor(handler string) string {
	if handler == "" {
		return ""
	}
	return "#job-" + url.PathEscape(handler)
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
	// Named is set when the event has a named handler's job, or several.
	Named bool
	Jobs  []jobView
}

// jobView is one job of the item's page.
type jobView struct {
	Job adminjson.Job
	// ID is the job's element ID suffix: "" for the first job (the IDs
	// the page has always had), "-" and the handler for the others.
	ID string
	// Section is the element ID of the job's section: "job-" and its
	// handler ("job-default" for the default handler's).
	Section string
	// ReplayBody and ReplayCommand show how to replay a finished job
	// through the API and the command line; CloseCommand how to close a
	// dead one.
	ReplayBody, ReplayCommand, CloseCommand string
	// OvertookURL is the page of the dead letter the job ran past.
	OvertookURL string
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
	data.Named = len(data.Detail.Jobs) > 1
	for i, j := range data.Detail.Jobs {
		data.Named = data.Named || j.Handler != ""
		v := jobView{Job: j}
		if i > 0 {
			v.ID = "-" + handlerID(j.Handler)
		}
		v.Section = "job-" + handlerID(j.Handler)
		if j.Overtook != "" {
			v.OvertookURL = itemURL(webhooks.InboxKey{Provider: key.Provider, Tenant: key.Tenant, EventID: j.Overtook}) + jobAnchor(j.Handler)
		}
		switch webhooks.State(j.State) {
		case webhooks.StateDead, webhooks.StateClosed, webhooks.StateSucceeded:
			body, _ := json.Marshal(adminjson.ReplayRequest{Key: adminjson.KeyOf(key), Handler: j.Handler, Reason: "…"})
			v.ReplayBody = string(body)
			v.ReplayCommand = "hookinbox replay " + keyFlags(key, j.Handler) + " -actor YOU -reason '…'"
			if webhooks.State(j.State) == webhooks.StateDead {
				v.CloseCommand = "hookinbox close " + keyFlags(key, j.Handler) + " -actor YOU -reason '…'"
			}
		}
		data.Jobs = append(data.Jobs, v)
	}
	h.render(w, r, http.StatusOK, itemPage, data)
}

// handlerID names a job in element IDs: its handler, or "default".
func handlerID(name string) string {
	if name == "" {
		return "default"
	}
	return name
}

// keyFlags are hookinbox's flags addressing a job.
func keyFlags(key webhooks.InboxKey, handler string) string {
	s := "-provider " + shellQuote(key.Provider)
	if key.Tenant != "" {
		s += " -tenant " + shellQuote(key.Tenant)
	}
	s += " -event-id " + shellQuote(key.EventID)
	if handler != "" {
		s += " -handler " + shellQuote(handler)
	}
	return s
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/@+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
