// Package jsonpath finds the values at dotted paths ("data.object.id",
// "events.0.type"; not RFC 9535 JSONPath) in a JSON body, in one pass over
// the body for every path a verifier reads. It is shared by the root
// package's verifiers and package providers, and imports neither.
package jsonpath
