package webhooks

import (
	"crypto/hmac"

	"github.com/hookinbox/webhooks/internal/hmackey"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// matches computes the HMAC of the request's content with k and compares
// it in constant time with each signature.
func matches(k *hmackey.Key, t sigsyntax.Template, in *signedMessage) bool {
	st := k.Borrow()
	defer k.Return(st)
	if in.content != nil {
		st.MAC.Write(in.content)
	} else {
		st.Buf = t.Write(st.MAC, st.Buf, in.values)
	}
	sum := st.Sum()
	for i := range in.sigs.Len() {
		if hmac.Equal(sum, in.sigs.At(i)) {
			return true
		}
	}
	return false
}
