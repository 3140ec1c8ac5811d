// Package sdkcheck cross-checks the catalog against providers' own Go
// SDKs, in a module of its own so the SDKs never enter the library's
// go.mod: deliveries webhookstest signs must verify with the SDK, and
// deliveries the SDK signs (where it can) must verify with the catalog
// entry. Run it with "cd providers/internal/sdkcheck && go test ./...".
package sdkcheck
