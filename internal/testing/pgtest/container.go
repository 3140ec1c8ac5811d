//go:build testcontainers

package pgtest

import (
	"context"
	"fmt"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

// containerImage is the image started when no URL is given.
const containerImage = "postgres:15-alpine"

var container *tcpostgres.PostgresContainer

// startContainer starts a PostgreSQL container when a Docker engine is
// reachable, returning its connection string, or why the tests skip, or
// what broke.
func startContainer() (dsn, skip string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if !dockerReachable(ctx) {
		return "", EnvDatabaseURL + " is not set and no Docker engine is reachable", nil
	}
	ctx, cancel = context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := tcpostgres.Run(ctx, containerImage,
		tcpostgres.WithDatabase("test"),
		tcpostgres.WithUsername("postgres"),
		tcpostgres.WithPassword("postgres"),
		tcpostgres.BasicWaitStrategies(),
	)
	if err != nil {
		if c != nil {
			_ = c.Terminate(context.Background())
		}
		return "", fmt.Sprintf("%s is not set and starting a %s container failed (%v)", EnvDatabaseURL, containerImage, err), nil
	}
	u, err := c.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		_ = c.Terminate(context.Background())
		return "", "", fmt.Errorf("reading the container's connection string: %w", err)
	}
	container = c
	return u, "", nil
}

// stopContainer stops the container startContainer started, if any, and
// reports whether there was one.
func stopContainer() bool {
	if container == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = container.Terminate(ctx)
	return true
}

// dockerReachable reports whether testcontainers can talk to an engine. It
// fails fast when there is no socket.
func dockerReachable(ctx context.Context) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	provider, err := testcontainers.ProviderDefault.GetProvider()
	if err != nil {
		return false
	}
	defer func() { _ = provider.Close() }()
	err = provider.Health(ctx)
	return err == nil
}
