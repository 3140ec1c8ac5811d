// Package admin is an operator's window on an inbox: a JSON API and a small
// HTML page, which shows the inbox and pauses and resumes handlers,
// served by one http.Handler over any [ops.Store] (memstore, pgstore, a
// host's own store).
//
// # Never mount it in public
//
// The handler has no authentication of its own. It shows what the inbox
// holds — event IDs, tenants, error messages, and with [WithPayloads] the
// payloads and stored headers — and its API replays items and closes dead
// letters. Mount it only behind the host's own authentication and
// authorization (an admin session, a bearer token checked in constant time,
// a VPN or an internal listener), exactly as you would a database console:
//
//	h, err := admin.NewHandler(store,
//		admin.WithPathPrefix("/admin/"),
//		admin.WithActor(func(r *http.Request) string { return userFromSession(r) }),
//	)
//	…
//	mux.Handle("/admin/", requireAdmin(h))
//
// # Who acts
//
// Replays and closings are audited with an actor, a reason and an optional
// ticket. The actor is the host's to say, from the request's
// authentication, through [WithActor]: a request body may give the reason
// and the ticket, never the actor (a body naming one is refused). Without
// WithActor, or when it returns "", the mutating endpoints answer 403 and
// the handler is read-only. They also accept only JSON bodies and refuse
// cross-origin browser requests ([net/http.CrossOriginProtection]), so a
// page elsewhere cannot replay through an operator's session. The page's
// pause and resume forms (shown only to a request WithActor names an
// actor for, on a webhooks.PauseStore) post to the page's own pause and
// resume paths, which refuse what the API refuses (cross-origin
// requests, no actor, no reason) and take the form's handler and reason
// only.
//
// # Mounting
//
// The handler serves the paths below under its prefix ([WithPathPrefix],
// "/" by default, for a handler mounted with http.StripPrefix). The page
// uses relative links only, so it works under any prefix; a request for the
// prefix without its trailing slash is redirected to it.
//
//	GET  {prefix}                  the page: stats and dead letters, filtered and paged
//	GET  {prefix}item?provider=…&tenant=…&event_id=…   the page of one item
//	POST {prefix}pause             the page's pause form (handler, provider, tenant, types, reason) → 303 to the page
//	POST {prefix}resume            the page's resume form (handler, provider, tenant, types, reason) → 303 to the page
//	GET  {prefix}api/stats         Stats
//	GET  {prefix}api/dead-letters  Page of dead letters (state=closed: closed ones)
//	GET  {prefix}api/item?provider=…&tenant=…&event_id=…   Detail
//	POST {prefix}api/replay        ReplayRequest → ReplayResult
//	POST {prefix}api/bulk-replay   BulkReplayRequest → ReplayResult, a batch at a time
//	POST {prefix}api/close         CloseRequest → CloseResult
//	POST {prefix}api/pause         PauseRequest → PauseResult
//	POST {prefix}api/resume        PauseRequest → PauseResult
//
// (The objects are those of the JSON section below.) api/pause pauses a
// handler, or every handler ("*"), over every processor (an operator's
// webhooks.Pause: its jobs are stored and wait, spending no attempts),
// whole or only its jobs in a scope (a provider, one of its tenants, an
// event-type pattern: webhooks.PauseScope); api/resume ends the pause of
// that handler and scope, an operator's or a breaker's; both are audited
// with the actor and the reason, in the pauses' trail
// (webhooks.PauseStore.Pauses, hookinbox pauses). A resume of a handler
// and scope that is not paused answers 409 not_paused; on a store that
// cannot pause, both answer 501 not_implemented. The stats' paused lists
// the pauses in force; the page shows them, with a Resume button each and
// a form to pause a handler or a scope.
//
// # Handlers and ordering keys
//
// An event is stored once, with one job per handler that takes it (see
// webhooks.Handlers); the default handler is "". Lists, replays, closings
// and dead-letter groups are per job: each listed item is one job, with its
// handler, and api/replay and api/close act on the job their handler
// names (left out: the default handler's). An item's page and api/item
// show the event with every job, each with its own state, attempts and
// audit trail (Detail.jobs; the top-level fields are the first job's). A
// listing or a bulk replay's filter selects one handler's jobs with
// handler=NAME, the default handler's with default_handler=true, and every
// handler's with neither (as tenant and no_tenant select tenants: an
// empty handler parameter, which a form sends, is no filter). A replay
// with to_handler replays the selected events to that handler: its job is
// created, pending (ordered with to_ordered, so it waits behind its key;
// of priority to_priority, from 0 to webhooks.MaxTypePriority, see
// webhooks.Handler.TypePriorities), or replayed if it exists and is
// finished; a bulk replay with to_handler
// needs a filter of one handler, so that it takes each event once. This is
// how old events reach a handler added after them.
//
// Stats adds each handler's counts (handlers, waiting jobs among their
// states) and the held ordering keys: the keys whose head job has failed
// with jobs waiting behind it, the deepest [ops.DefaultHeldKeys], each with
// its depth, head, head's attempts and last error, the next job and how
// long it has waited (more_held_keys counts the others). A job that became
// its key's head while an earlier dead letter of its key was neither
// replayed nor closed says so (overtook: that dead letter's event ID), on
// the list and on the item's page. Handler names are plain (at most 63
// bytes, see webhooks.CheckHandlerName); ordering keys are the sender's
// text: the page escapes both and shortens long keys (the API gives them
// whole).
//
// A replay gives each item the retry policy's whole budget again unless the
// body asks to keep_attempts. api/replay replays one item whether it is
// dead, closed (undoing the closing) or succeeded (running it again);
// api/bulk-replay takes the items its filter matches, newest first: dead
// letters unless its state names closed or succeeded items, at most limit
// of them (from 1 to [ops.MaxReplayLimit], [ops.DefaultReplayLimit] by
// default). Its spread is a Go duration ("10m"), at most
// [ops.MaxReplaySpread]: the items fall due evenly over that window from
// now instead of all at once. A dry_run says what would be replayed and
// changes nothing. A bulk replay is a job the client drives: each request
// goes through at most [ops.ReplayBatch] items and answers with its
// progress (done of total) and the next cursor, to send back as after,
// with the same body, until the answer has none (a cursor sent with a
// smaller limit is refused); nothing runs on after the answer. A replay
// takes only the items it selected when it began, each once: those that
// left the state meanwhile (replayed or closed by someone else) are
// skipped, not made up for with others, and done counts them. So a replay
// stopped halfway is continued with its cursor; run again from the start,
// it is a new replay of what is in the state then.
//
// Dead-letter listings take these query parameters, each optional:
// handler (one handler) or default_handler=true (the default handler's
// jobs), provider, tenant (one tenant) or no_tenant=true (the items of no tenant),
// event_type, error_class, api_version, from and to (when the items died,
// from included, to excluded: RFC 3339, or a date as YYYY-MM-DD in UTC),
// state (dead, the default, or closed), limit (1 to [MaxPageSize],
// [DefaultPageSize] by default) and after (the previous page's next
// cursor). An item is addressed by provider, tenant (empty or left out: no
// tenant) and event_id. Listings and stats read no payload: a page lists
// each item's payload length and digest, and the groups of dead letters by
// provider and event type are the largest [ops.DefaultDeadLetterGroups]
// (senders choose event types), with a count of the others
// (more_dead_letters). The item page shows a JSON payload indented,
// any other as it is (with WithPayloads); the API returns it as stored.
//
// # JSON
//
// Each body and answer is one JSON object, as listed here by name: its
// fields, in order, with a "?" after those left out when they are not set
// (a request may leave them out too), and a capitalized name for another
// object's fields in place. Times are RFC 3339 in UTC; payloads and stored
// headers appear only with [WithPayloads], payloads as stored.
//
//	Key                provider, tenant (empty: no tenant), event_id
//	Item               Key, handler (empty: the default handler), event_type, state,
//	                   attempts (counted by the retry policy),
//	                   next_attempt_at?, lease_expires_at?, last_error? (ErrorRecord),
//	                   api_version?, key_id? (the secret that verified it),
//	                   trace_link?, payload_sha256 (hex), payload_bytes,
//	                   duplicate_count, occurred_at?, received_at?, last_seen_at?,
//	                   updated_at?, completed_at?, dead_at?, closed_at?,
//	                   ordering_key?, ordering_version?, ordered?, seq? (arrival order),
//	                   overtook? (the dead letter of its key it ran past),
//	                   priority? (among the handler's due jobs; left out when 0)
//	ErrorRecord        class, message, at?
//	Detail             Item, payload? (Body), headers? (name: [values]),
//	                   payloads_shown, history ([Attempt]), audit ([Audit]),
//	                   quarantine ([Delivery]), conflicts (deliveries that reused
//	                   the event ID with another payload, quarantined or not),
//	                   jobs ([Job], one per handler; the first is the Item above)
//	Job                Item, history ([Attempt]), audit ([Audit])
//	Body               text? (when the payload is UTF-8), base64? (otherwise)
//	Attempt            number, outcome, started_at?, finished_at?, error_class?,
//	                   error?, worker?, version?
//	Audit              action (replay, close, redelivery), at, actor, reason?, ticket?
//	Delivery           payload_sha256, payload_bytes, key_id?, received_at?,
//	                   payload? (Body), headers?
//	Page               items ([Item]), next? (the after of the next page)
//	Stats              as_of, states (state: items; succeeded may be estimated),
//	                   succeeded_estimated, due (the backlog), oldest_due?,
//	                   oldest_due_age_seconds, parked (held by a scoped pause),
//	                   retrying, leases_held,
//	                   dead_letters ([Count], the largest groups first),
//	                   more_dead_letters (More), handlers ([HandlerStats]),
//	                   held_keys ([HeldKey], the deepest first), more_held_keys,
//	                   paused ([Pause], by handler, then scope)
//	Pause              handler ("*": every handler), Scope, cause (operator, breaker),
//	                   actor, reason, since, until? (a breaker's cool-down),
//	                   probe_until? (its probe's lease)
//	Scope              provider?, tenant? (needs provider), types? (an event-type
//	                   pattern: "invoice.paid", "invoice.*"; without any, every job)
//	HandlerStats       handler, states (state: jobs, succeeded left out), due,
//	                   oldest_due?, oldest_due_age_seconds, parked, retrying,
//	                   leases_held
//	HeldKey            handler, provider, tenant, key, depth (the head and those waiting),
//	                   head_event_id, head_attempts, head_error? (ErrorRecord),
//	                   next_event_id?, next_received_at?, waiting_seconds (since then)
//	Count              handler, provider, event_type, count
//	More               groups, count (both zero when the list is complete)
//	ReplayRequest      Key, handler?, reason, ticket?, keep_attempts?, to_handler?,
//	                   to_ordered?, to_priority?
//	BulkReplayRequest  filter (Filter), state?, limit?, reason, ticket?,
//	                   keep_attempts?, dry_run?, spread?, rate?, after?, to_handler?, to_ordered?,
//	                   to_priority?
//	Filter             provider?, tenant?, no_tenant?, event_type?, error_class?,
//	                   api_version?, from? (included), to? (excluded), handler?,
//	                   default_handler?
//	ReplayResult       dry_run, actor, count, items ([Replayed]), done, total,
//	                   next? (the after to continue with)
//	Replayed           Key, handler, due_at
//	CloseRequest       Key, handler?, reason, ticket?
//	CloseResult        Key, handler, state, actor
//	PauseRequest       handler ("*": every handler), Scope, reason, ticket?
//	PauseResult        handler, Scope, paused (whether it is paused now), actor, at
//	ErrorResponse      error (a code), message
//
// A request's reason is required; its actor comes from the host
// ([WithActor]), never from the body. A filter's from and to bound when the
// items died (closed items: were closed; succeeded ones: completed).
//
// # Errors
//
// Every error is answered with a JSON ErrorResponse: 400 for a bad
// parameter, filter, cursor or body (an unknown parameter or field
// included, so a typo does not silently widen a filter or a replay), 403
// without an actor or for a cross-origin request, 404 for an unknown item
// or path, 405 (with Allow) for a wrong method, 409 for closing an item
// that is not a dead letter (not_dead) or replaying one that is pending or
// running (not_finished), 415 for a body that is not JSON, 500 when the
// store fails: the error is logged with a reference, and the answer gives
// only the reference, never the store's error text. The page answers the
// same statuses with an HTML message. No answer may be framed
// (X-Frame-Options: DENY, and the pages' CSP says frame-ancestors 'none').
package admin
