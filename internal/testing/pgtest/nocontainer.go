//go:build !testcontainers

package pgtest

// startContainer, in a build without -tags testcontainers, says how to get
// a database.
func startContainer() (dsn, skip string, err error) {
	return "", EnvDatabaseURL + " is not set (or build with -tags testcontainers to start a PostgreSQL container with Docker)", nil
}

// stopContainer has no container to stop.
func stopContainer() bool { return false }
