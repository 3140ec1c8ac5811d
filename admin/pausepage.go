package admin

import (
	"mime"
	"net/http"
	"slices"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/adminjson"
)

// pauseForms is what the page needs for its pause and resume forms: shown
// only to a request the host names an actor for, on a PauseStore.
type pauseForms struct {
	// Handlers are those the pause form offers: the handlers with jobs
	// (the default one when there are none), less those paused whole,
	// then every handler (webhooks.EveryHandler), unless it is.
	Handlers []string
}

// pauseFormsFor returns the forms for r beside st, or nil when r may not
// pause or resume.
func (h *Handler) pauseFormsFor(r *http.Request, st *adminjson.Stats) *pauseForms {
	if _, ok := h.store.(webhooks.PauseStore); !ok {
		return nil
	}
	if _, refusal := h.actorOf(r); refusal != "" {
		return nil
	}
	f := &pauseForms{}
	names := []string{""}
	if len(st.Handlers) > 0 {
		names = names[:0]
		for _, hs := range st.Handlers {
			names = append(names, hs.Handler)
		}
	}
	for _, name := range append(names, webhooks.EveryHandler) {
		if !slices.ContainsFunc(st.Paused, func(p adminjson.Pause) bool { return p.Handler == name && p.Scope == adminjson.Scope{} }) {
			f.Handlers = append(f.Handlers, name)
		}
	}
	return f
}

// servePauseForm takes the page's pause form: an operator's pause of a
// handler, audited with the request's actor and the form's reason.
func (h *Handler) servePauseForm(w http.ResponseWriter, r *http.Request) {
	h.servePauseOrResumeForm(w, r, true)
}

// serveResumeForm takes the page's resume form: the end of a handler's
// pause, an operator's or a breaker's.
func (h *Handler) serveResumeForm(w http.ResponseWriter, r *http.Request) {
	h.servePauseOrResumeForm(w, r, false)
}

// pauseFields are the fields of the page's pause and resume forms, each
// at most once, as the API's PauseRequest has them: a missing handler is
// the default one, and an empty or missing provider, tenant or types
// narrows nothing.
var pauseFields = []string{"handler", "provider", "tenant", "types", "reason"}

// servePauseOrResumeForm does what the API's pause or resume does, for a
// form of the page (application/x-www-form-urlencoded: pauseFields),
// answering with the page again (303) or an error page. It refuses what
// the API refuses: a cross-origin request, one without an actor, no
// reason, a scope webhooks.PauseScope.Check refuses.
func (h *Handler) servePauseOrResumeForm(w http.ResponseWriter, r *http.Request, pause bool) {
	actor, refusal := h.actorOf(r)
	if refusal != "" {
		h.pageError(w, http.StatusForbidden, refusal)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		h.pageError(w, http.StatusUnsupportedMediaType, "send the form as the page does, application/x-www-form-urlencoded (the API's api/pause and api/resume take JSON)")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		h.pageError(w, http.StatusBadRequest, "the form could not be read: "+err.Error())
		return
	}
	for field, vs := range r.PostForm {
		if !slices.Contains(pauseFields, field) || len(vs) != 1 {
			h.pageError(w, http.StatusBadRequest, "the form has handler and reason, and may have provider, tenant and types, once each; the actor comes from the request's authentication")
			return
		}
	}
	f := r.PostForm.Get
	req := adminjson.PauseRequest{Handler: f("handler"), Reason: f("reason"),
		Scope: adminjson.Scope{Provider: f("provider"), Tenant: f("tenant"), Types: f("types")}}
	if _, err := h.pauseOrResume(r, pause, actor, req); err != nil {
		h.pageStoreError(w, r, err)
		return
	}
	w.Header().Set("Location", "./#pauses")
	w.WriteHeader(http.StatusSeeOther)
}
