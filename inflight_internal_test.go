package webhooks

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestClientOf: a client is an IP address, an IPv6 one by its /64, so
// that one subscriber's many addresses share one share.
func TestClientOf(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"192.0.2.1:1234":             "192.0.2.1",
		"[::ffff:192.0.2.1]:1234":    "192.0.2.1",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443": "2001:db8:1:2::/64",
		"[fe80::1%eth0]:80":          "fe80::/64",
		"pipe":                       "pipe",
		"":                           "",
	} {
		assert.Equal(t, want, clientOf(addr), "clientOf(%q)", addr)
	}
}
