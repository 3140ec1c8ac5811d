package admin_test

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/hookinbox/webhooks/admin"
	"github.com/hookinbox/webhooks/memstore"
)

// The handler is mounted behind the host's own authentication, which also
// names the actor of replays and closings.
func Example() {
	inbox := memstore.NewInbox() // or a *pgstore.Store

	operators := map[string]string{"alice": "correct horse battery staple"}
	authenticated := func(r *http.Request) (string, bool) {
		user, pass, ok := r.BasicAuth()
		want, known := operators[user]
		if !ok || !known || subtle.ConstantTimeCompare([]byte(pass), []byte(want)) != 1 {
			return "", false
		}
		return user, true
	}
	h, err := admin.NewHandler(inbox,
		admin.WithPathPrefix("/admin/"),
		admin.WithActor(func(r *http.Request) string {
			user, _ := authenticated(r)
			return user
		}),
	)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := authenticated(r); !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="operators"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))

	for _, pass := range []string{"guess", "correct horse battery staple"} {
		req := httptest.NewRequest(http.MethodGet, "/admin/api/stats", nil)
		req.SetBasicAuth("alice", pass)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		fmt.Println(rec.Code)
	}
	// Output:
	// 401
	// 200
}
