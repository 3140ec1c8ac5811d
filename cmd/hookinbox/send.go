package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// maxAnswerBytes bounds the answer send prints.
const maxAnswerBytes = 64 << 10

func sendFlags(w io.Writer) (*flag.FlagSet, *sendOptions) {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	fs.SetOutput(w)
	o := &sendOptions{}
	fs.StringVar(&o.provider, "provider", "", "catalog name of the provider to sign as, for example stripe (required; see providers/CATALOG.md)")
	fs.StringVar(&o.url, "url", "", "endpoint to post to, for example http://localhost:8080/webhooks/stripe (required)")
	fs.StringVar(&o.secretEnv, "secret-env", "", "environment variable holding the signing secret (default <NAME>_WEBHOOK_SECRET of the provider)")
	fs.StringVar(&o.file, "file", "", "file with the body to send instead of the provider's sample")
	fs.StringVar(&o.eventType, "type", "", "event type of the sample (default the provider's sample type)")
	fs.StringVar(&o.tenant, "tenant", "", "tenant: appended to the URL's path as /{tenant}")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "how long to wait for the answer")
	return fs, o
}

type sendOptions struct {
	provider, url, secretEnv, file, eventType, tenant string
	timeout                                           time.Duration
}

func sendUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: hookinbox send -provider NAME -url URL [-secret-env VAR] [-file body.json | -type EVENT_TYPE] [-tenant T]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Signs a realistic sample delivery as the provider does (headers, content type,")
	fmt.Fprintln(w, "event ID and type) with the secret in the environment, posts it, and prints the")
	fmt.Fprintln(w, "answer. Exits 1 when the answer is not 2xx. Providers that sign with a private")
	fmt.Fprintln(w, "key (Ed25519, ECDSA, certificates) cannot be sent from here: only they hold it.")
	fmt.Fprintln(w)
	fs, _ := sendFlags(w)
	fs.PrintDefaults()
}

func runSend(args []string, e env) int {
	fs, o := sendFlags(e.stderr)
	fs.Usage = func() { sendUsage(e.stderr) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "hookinbox send: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	d, code := o.delivery(e)
	if code != exitOK {
		return code
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	req, err := d.Request(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "hookinbox send: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(e.stdout, "%s %s (%s, event %s", d.Method, d.URL, o.provider, d.EventID)
	if d.EventType != "" {
		fmt.Fprintf(e.stdout, ", type %s", d.EventType)
	}
	fmt.Fprintln(e.stdout, ")")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(e.stderr, "hookinbox send: %v\n", err)
		return exitFail
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	fmt.Fprintf(e.stdout, "%s\n", resp.Status)
	if len(body) > 0 {
		fmt.Fprintf(e.stdout, "%s\n", strings.TrimRight(string(body), "\n"))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		fmt.Fprintf(e.stderr, "hookinbox send: the endpoint answered %s\n", resp.Status)
		return exitFail
	}
	return exitOK
}

// delivery checks the options and signs the delivery.
func (o *sendOptions) delivery(e env) (*webhookstest.Delivery, int) {
	usageErr := func(format string, args ...any) (*webhookstest.Delivery, int) {
		fmt.Fprintf(e.stderr, "hookinbox send: "+format+"\n", args...)
		return nil, exitUsage
	}
	if o.provider == "" || o.url == "" {
		return usageErr("-provider and -url are required (hookinbox help send)")
	}
	entry, ok := providers.Lookup(o.provider)
	if !ok {
		return usageErr("unknown provider %q: providers/CATALOG.md lists the catalog", o.provider)
	}
	switch entry.Scheme {
	case providers.SchemeEd25519, providers.SchemeECDSA, providers.SchemeCertificate:
		return usageErr("%s signs with a private key only the provider holds (scheme %s): use webhookstest.NewKeySigner in a test instead", o.provider, entry.Scheme)
	}
	u, err := url.Parse(o.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErr("-url %q is not an http(s) URL", o.url)
	}
	if o.tenant != "" {
		u = u.JoinPath(o.tenant)
	}
	secretEnv := o.secretEnv
	if secretEnv == "" {
		secretEnv = entry.SecretEnv()
	}
	secret := e.getenv(secretEnv)
	if secret == "" {
		return usageErr("the environment variable %s is empty: set it to the provider's secret, or name another with -secret-env", secretEnv)
	}
	msg := webhookstest.Message{Type: o.eventType}
	if o.file != "" {
		body, err := os.ReadFile(o.file)
		if err != nil {
			return usageErr("reading -file: %v", err)
		}
		msg.Body = body
	}
	signer, err := webhookstest.NewSigner(o.provider, secret)
	if err != nil {
		return usageErr("%v", err)
	}
	d, err := signer.Sign(u.String(), msg)
	if err != nil {
		return usageErr("signing: %v", err)
	}
	return d, exitOK
}
