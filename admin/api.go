package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/ops"
)

// maxBodyBytes bounds the body of a mutating request.
const maxBodyBytes = 64 << 10

func (h *Handler) serveStats(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query(), nil); err != nil {
		h.storeError(w, r, err)
		return
	}
	now := h.cfg.clock.Now()
	st, err := h.store.Stats(r.Context(), ops.StatsRequest{Now: now})
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, adminjson.NewStats(&st, now))
}

func (h *Handler) serveDeadLetters(w http.ResponseWriter, r *http.Request) {
	l, err := parseListing(r.URL.Query())
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	page, err := h.store.List(r.Context(), l.query())
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, adminjson.NewPage(&page))
}

func (h *Handler) serveItem(w http.ResponseWriter, r *http.Request) {
	key, err := parseKey(r.URL.Query())
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	d, err := h.store.Get(r.Context(), key)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, adminjson.NewDetail(&d, h.cfg.payloads))
}

func (h *Handler) serveReplay(w http.ResponseWriter, r *http.Request) {
	actor, ok := h.mutation(w, r)
	if !ok {
		return
	}
	var req adminjson.ReplayRequest
	if !h.decode(w, r, &req) {
		return
	}
	if err := errors.Join(checkKey(req.Key), needReason(req.Reason), checkHandler("handler", req.Handler),
		checkToHandler(req.ToHandler, req.ToOrdered, req.ToPriority, req.KeepAttempts)); err != nil {
		h.storeError(w, r, err)
		return
	}
	if req.ToHandler != "" && req.Handler != "" {
		h.storeError(w, r, badf("handler %q and to_handler %q: to_handler names the job to replay (created when the event has none); leave handler out", req.Handler, req.ToHandler))
		return
	}
	res, err := h.store.Replay(r.Context(), ops.ReplayRequest{
		Key:          req.Key.InboxKey(),
		Handler:      req.Handler,
		Actor:        actor,
		Reason:       req.Reason,
		Ticket:       req.Ticket,
		KeepAttempts: req.KeepAttempts,
		ToHandler:    req.ToHandler,
		ToOrdered:    req.ToOrdered,
		ToPriority:   req.ToPriority,
		Now:          h.cfg.clock.Now(),
	})
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, adminjson.NewReplayResult(&res, actor, false))
}

func (h *Handler) serveBulkReplay(w http.ResponseWriter, r *http.Request) {
	actor, ok := h.mutation(w, r)
	if !ok {
		return
	}
	var req adminjson.BulkReplayRequest
	if !h.decode(w, r, &req) {
		return
	}
	var spread time.Duration
	var errs []error
	if req.Spread != "" {
		d, err := time.ParseDuration(req.Spread)
		switch {
		case err != nil || d < 0:
			errs = append(errs, badf("spread %q: give a duration such as 10m or 2h", req.Spread))
		case d > ops.MaxReplaySpread:
			errs = append(errs, badf("spread %q: it may be at most %v", req.Spread, ops.MaxReplaySpread))
		}
		spread = d
	}
	limit := req.Limit
	switch {
	case limit == 0:
		limit = ops.DefaultReplayLimit
	case limit < 1 || limit > ops.MaxReplayLimit:
		errs = append(errs, badf("limit %d: give the most items this replay takes, from 1 to %d (default %d)", limit, ops.MaxReplayLimit, ops.DefaultReplayLimit))
	}
	state := webhooks.State(req.State)
	switch state {
	case "", webhooks.StateDead, webhooks.StateClosed, webhooks.StateSucceeded:
	default:
		errs = append(errs, badf("state %q: give dead (the default), closed or succeeded", req.State))
	}
	errs = append(errs, needReason(req.Reason), checkFilter(&req.Filter), checkToHandler(req.ToHandler, req.ToOrdered, req.ToPriority, req.KeepAttempts))
	if req.Rate != 0 && (req.Spread != "" || req.Rate < 0 || req.Rate > webhooks.MaxLimitRate || float64(limit)/req.Rate > ops.MaxReplaySpread.Seconds()) {
		errs = append(errs, badf("rate %v: give items a second, above 0 and at most %g, without spread, so that limit (%d) items fit in %v",
			req.Rate, float64(webhooks.MaxLimitRate), limit, ops.MaxReplaySpread))
	}
	if req.ToHandler != "" && req.Filter.Handler == "" && !req.Filter.DefaultHandler {
		errs = append(errs, badf("to_handler %q needs the filter to select one handler (handler, or default_handler), so that each event is taken once", req.ToHandler))
	}
	if err := errors.Join(errs...); err != nil {
		h.storeError(w, r, err)
		return
	}
	q := req.Filter.Query()
	q.State, q.Limit, q.After = state, limit, req.After
	res, err := h.store.Replay(r.Context(), ops.ReplayRequest{
		Query:        &q,
		Actor:        actor,
		Reason:       req.Reason,
		Ticket:       req.Ticket,
		KeepAttempts: req.KeepAttempts,
		DryRun:       req.DryRun,
		Spread:       spread,
		Rate:         req.Rate,
		ToHandler:    req.ToHandler,
		ToOrdered:    req.ToOrdered,
		ToPriority:   req.ToPriority,
		Now:          h.cfg.clock.Now(),
	})
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, adminjson.NewReplayResult(&res, actor, req.DryRun))
}

func (h *Handler) serveClose(w http.ResponseWriter, r *http.Request) {
	actor, ok := h.mutation(w, r)
	if !ok {
		return
	}
	var req adminjson.CloseRequest
	if !h.decode(w, r, &req) {
		return
	}
	if err := errors.Join(checkKey(req.Key), needReason(req.Reason), checkHandler("handler", req.Handler)); err != nil {
		h.storeError(w, r, err)
		return
	}
	err := h.store.CloseDeadLetter(r.Context(), ops.CloseRequest{
		Key:     req.Key.InboxKey(),
		Handler: req.Handler,
		Actor:   actor,
		Reason:  req.Reason,
		Ticket:  req.Ticket,
		Now:     h.cfg.clock.Now(),
	})
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, adminjson.CloseResult{Key: req.Key, Handler: req.Handler, State: string(webhooks.StateClosed), Actor: actor})
}

// errNoPauses is the error of a pause or resume on a store that is not a
// webhooks.PauseStore.
var errNoPauses = errors.New("the store cannot pause handlers (it is not a webhooks.PauseStore)")

// servePause pauses a handler (an operator's pause), audited with the
// request's actor and reason.
func (h *Handler) servePause(w http.ResponseWriter, r *http.Request) {
	h.servePauseOrResume(w, r, true)
}

// serveResume ends a handler's pause, an operator's or a breaker's.
func (h *Handler) serveResume(w http.ResponseWriter, r *http.Request) {
	h.servePauseOrResume(w, r, false)
}

func (h *Handler) servePauseOrResume(w http.ResponseWriter, r *http.Request, pause bool) {
	actor, ok := h.mutation(w, r)
	if !ok {
		return
	}
	var req adminjson.PauseRequest
	if !h.decode(w, r, &req) {
		return
	}
	now, err := h.pauseOrResume(r, pause, actor, req)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, adminjson.PauseResult{Handler: req.Handler, Scope: req.Scope, Paused: pause, Actor: actor, At: now.UTC()})
}

// pauseOrResume pauses req's handler (or every handler) in its scope (an
// operator's pause), or ends that pause, for actor, at the handler's
// clock's now, which it returns: what the API's endpoints and the page's
// forms do.
func (h *Handler) pauseOrResume(r *http.Request, pause bool, actor string, req adminjson.PauseRequest) (time.Time, error) {
	scope := req.PauseScope()
	var handlerErr, scopeErr error
	if req.Handler != webhooks.EveryHandler {
		handlerErr = checkHandler("handler", req.Handler)
	}
	if err := scope.Check(); err != nil {
		scopeErr = badf("scope: %v", err)
	}
	if err := errors.Join(needReason(req.Reason), handlerErr, scopeErr); err != nil {
		return time.Time{}, err
	}
	ps, ok := h.store.(webhooks.PauseStore)
	if !ok {
		return time.Time{}, errNoPauses
	}
	reason, now := req.Reason, h.cfg.clock.Now()
	if req.Ticket != "" {
		reason += " (ticket " + req.Ticket + ")"
	}
	if pause {
		return now, ps.Pause(r.Context(), webhooks.PauseRequest{Handler: req.Handler, Scope: scope, Cause: webhooks.PauseOperator, Actor: actor, Reason: reason, Now: now})
	}
	return now, ps.Resume(r.Context(), webhooks.ResumeRequest{Handler: req.Handler, Scope: scope, Cause: webhooks.PauseOperator, Actor: actor, Reason: reason, Now: now})
}

// checkToHandler validates a replay to another handler.
func checkToHandler(to string, ordered bool, priority int, keepAttempts bool) error {
	switch {
	case to != "" && keepAttempts:
		return badf("to_handler and keep_attempts: a job replayed to another handler has no attempts of its own to keep")
	case ordered && to == "":
		return badf("to_ordered without to_handler: it makes the jobs a replay to another handler creates ordered")
	case priority != 0 && to == "":
		return badf("to_priority without to_handler: it is the priority of the jobs a replay to another handler creates")
	case priority < 0 || priority > webhooks.MaxTypePriority:
		return badf("to_priority %d: give the priority of the jobs the replay creates, from 0 to %d", priority, webhooks.MaxTypePriority)
	}
	return checkHandler("to_handler", to)
}

func needReason(reason string) error {
	if strings.TrimSpace(reason) == "" {
		return badf("reason is required: say why, for the item's audit trail")
	}
	return nil
}

// mutation checks that a request may replay or close: it is not a
// cross-origin browser request, and the host names its actor. It answers
// the request and returns false when not.
func (h *Handler) mutation(w http.ResponseWriter, r *http.Request) (string, bool) {
	actor, refusal := h.actorOf(r)
	if refusal != "" {
		writeError(w, http.StatusForbidden, "forbidden", refusal)
		return "", false
	}
	return actor, true
}

// actorOf returns the actor of a request that changes the inbox, or why
// it may not (403): it is a cross-origin browser request, or the host
// names no actor for it.
func (h *Handler) actorOf(r *http.Request) (actor, refusal string) {
	if err := h.cop.Check(r); err != nil {
		return "", "cross-origin requests cannot replay, close, pause or resume: " + err.Error()
	}
	if h.cfg.actor == nil {
		return "", "this admin handler is read-only: the host did not say who acts (admin.WithActor), so nothing can be replayed, closed, paused or resumed through it"
	}
	if actor = h.cfg.actor(r); actor == "" {
		return "", "the request's authentication names no actor, and replays, closings and pauses are audited with one"
	}
	return actor, ""
}

// decode reads a JSON body into v, refusing other content types, unknown
// fields (an actor among them), trailing data and bodies over
// maxBodyBytes. It answers the request and returns false when it fails.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "send the body as JSON, with Content-Type: application/json")
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("data after the JSON object")
		}
	}
	if err != nil {
		msg := "bad JSON body: " + err.Error()
		var mbe *http.MaxBytesError
		switch {
		case errors.Is(err, io.EOF):
			msg = "the body is empty: send a JSON object"
		case errors.As(err, &mbe):
			msg = fmt.Sprintf("the body is over %d bytes", maxBodyBytes)
		case strings.Contains(err.Error(), `unknown field "actor"`):
			msg = "the body cannot name the actor: it comes from the request's authentication (admin.WithActor); give reason and ticket only"
		}
		writeError(w, http.StatusBadRequest, "bad_request", msg)
		return false
	}
	return true
}
