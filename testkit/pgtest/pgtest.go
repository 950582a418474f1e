// Package pgtest runs a throwaway PostgreSQL cluster for one test binary and
// hands each test a fresh, empty database in it.
//
// Lifecycle: a package that uses it calls Main from its TestMain
// (os.Exit(pgtest.Main(m))). The first test that calls URL starts the
// cluster — initdb into a new temp folder (as the `postgres` user when the
// tests run as root; the folder is chowned to it), then the postgres server
// as a direct child of the test binary, on a Unix socket in that folder only
// (listen_addresses empty). Every URL call creates a new database and returns
// its postgres:// URL (?host=<socket dir>). Main stops the server and
// removes the folder after the tests, also when they failed; the server runs
// with a parent-death signal, so even a test binary that crashes or is
// killed takes it down (no postgres outlives the tests). (The server is
// started directly rather than through `pg_ctl start`, whose daemonized
// server would survive a crashed test binary.)
//
// Without PostgreSQL (no initdb/postgres on PATH or under
// /usr/lib/postgresql/<ver>/bin) a test that asks for a database is skipped
// with a message naming scripts/test.sh (which installs it), and fails instead when
// FLOWER_REQUIRE_POSTGRES=1 (set by .ci/run).
package pgtest

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
)

// RequireEnv turns a missing PostgreSQL from a skip into a failure.
const RequireEnv = "FLOWER_REQUIRE_POSTGRES"

var (
	managed bool // Main is in charge of stopping the cluster
	once    sync.Once
	shared  *cluster
	initErr error
	dbCount atomic.Int64
)

// Main runs the tests and then stops the cluster, if a test started one.
func Main(m *testing.M) int {
	managed = true
	code := m.Run()
	if shared != nil {
		if err := shared.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// URL creates a fresh database in the test binary's cluster and returns its
// URL. It skips the test without PostgreSQL (fails under
// FLOWER_REQUIRE_POSTGRES=1) and fails it when the cluster cannot start.
// Under `go test -short` (the unit loop) it always skips.
func URL(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("postgres: -short is the unit loop, it starts no PostgreSQL")
	}
	if !managed {
		t.Fatal("pgtest: call pgtest.Main from this package's TestMain, so the cluster is stopped after the tests")
	}
	once.Do(func() { shared, initErr = start() })
	started(t, initErr)
	return shared.database(t)
}

// database creates a fresh database named for t in c and returns its URL.
func (c *cluster) database(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%s", dbCount.Add(1), sanitize(t.Name()))
	if _, err := c.admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	return c.url(name)
}

// started skips t when PostgreSQL is missing from the machine (a failure
// under RequireEnv=1, as in CI) and fails it when a cluster could not
// start for any other reason.
func started(t testing.TB, err error) {
	t.Helper()
	var missing *missingError
	switch {
	case errors.As(err, &missing) && os.Getenv(RequireEnv) != "1":
		t.Skipf("SKIPPING: %v (scripts/test.sh installs it as root with apt; %s=1 turns this skip into a failure)", err, RequireEnv)
	case err != nil:
		t.Fatalf("pgtest: %v", err)
	}
}

// SocketDir is the cluster's socket folder ("" before a URL call started it).
func SocketDir() string {
	if shared == nil {
		return ""
	}
	return shared.dir
}

// ServerPID is the cluster's postmaster (0 before a URL call started it):
// its process tree is the database's share of what a test costs.
func ServerPID() int {
	if shared == nil || shared.srv.Process == nil {
		return 0
	}
	return shared.srv.Process.Pid
}

type missingError struct{ what string }

func (e *missingError) Error() string { return "PostgreSQL is not installed: " + e.what }

type cluster struct {
	dir   string // owns data/ and the socket
	bin   string // initdb's and postgres' folder
	cred  *syscall.Credential
	srv   *exec.Cmd
	done  chan error
	log   *bytes.Buffer
	admin *sql.DB
}

func (c *cluster) url(db string) string {
	return "postgres://postgres@/" + db + "?host=" + url.QueryEscape(c.dir) + "&sslmode=disable"
}

// binDir finds the folder holding initdb and postgres: PATH first, then the
// newest /usr/lib/postgresql/<ver>/bin (where Debian puts them).
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "postgres")); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", &missingError{"no initdb on PATH or in /usr/lib/postgresql/*/bin"}
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// credential runs the server as `postgres` when the tests run as root
// (initdb and postgres refuse to run as root).
func credential() (*syscall.Credential, int, int, error) {
	if os.Geteuid() != 0 {
		return nil, -1, -1, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, 0, 0, &missingError{"running as root and there is no `postgres` user to run the server as"}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, uid, gid, nil
}

func start() (*cluster, error) {
	c, err := initCluster()
	if err != nil {
		return nil, err
	}
	if err := c.launch(); err != nil {
		os.RemoveAll(c.dir)
		return nil, err
	}
	if err := c.waitReady(); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// initCluster makes a new cluster's folder and data (initdb), not started.
func initCluster() (*cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, uid, gid, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "flower-pg-")
	if err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	c := &cluster{dir: dir, bin: bin, cred: cred, log: &bytes.Buffer{}}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres", "--auth=trust",
		"--no-sync", "--encoding=UTF8", "--locale=C")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	return c, nil
}

// launch starts the server on the cluster's data and socket folder.
func (c *cluster) launch() error {
	c.done = make(chan error, 1)
	c.srv = exec.Command(filepath.Join(c.bin, "postgres"), "-D", filepath.Join(c.dir, "data"), "-k", c.dir,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=200")
	c.srv.Dir = c.dir
	c.srv.Stdout, c.srv.Stderr = c.log, c.log
	c.srv.SysProcAttr = serverAttr(c.cred)
	if err := c.srv.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	done := c.done
	go func() { done <- c.srv.Wait() }()
	return nil
}

func (c *cluster) waitReady() error {
	db, err := sql.Open("pgx", c.url("postgres"))
	if err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-c.done:
			c.done <- err
			return fmt.Errorf("postgres exited: %v\n%s", err, c.log)
		default:
		}
		if err = db.Ping(); err == nil {
			c.admin = db
			return nil
		}
		if time.Now().After(deadline) {
			db.Close()
			return fmt.Errorf("postgres did not accept connections within 60 s: %v\n%s", err, c.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop shuts the server down and removes the folder.
func (c *cluster) stop() error {
	err := c.halt()
	if rmErr := os.RemoveAll(c.dir); rmErr != nil && err == nil {
		err = rmErr
	}
	return err
}

// halt shuts the server down fast (SIGINT: clients are disconnected) and
// waits for it; the data stays.
func (c *cluster) halt() error {
	if c.admin != nil {
		c.admin.Close()
		c.admin = nil
	}
	var err error
	c.srv.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		syscall.Kill(-c.srv.Process.Pid, syscall.SIGKILL)
		<-c.done
		err = fmt.Errorf("postgres did not stop within 30 s; killed")
	}
	return err
}

// Cluster is a test's own PostgreSQL cluster (Private): a test may stop
// and start it — a database outage — without touching the cluster the
// other tests share.
type Cluster struct {
	t  testing.TB
	c  *cluster
	mu sync.Mutex
	up bool
}

// Private starts a cluster of the test's own (initdb into a new folder,
// its own socket there), stopped and removed when the test ends. It skips
// or fails like URL without PostgreSQL.
func Private(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("postgres: -short is the unit loop, it starts no PostgreSQL")
	}
	c, err := start()
	started(t, err)
	pc := &Cluster{t: t, c: c, up: true}
	t.Cleanup(func() {
		pc.mu.Lock()
		defer pc.mu.Unlock()
		if !pc.up {
			os.RemoveAll(c.dir)
			return
		}
		if err := c.stop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return pc
}

// URL creates a fresh database in the cluster and returns its URL.
func (pc *Cluster) URL() string {
	pc.t.Helper()
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.c.database(pc.t)
}

// Stop shuts the server down (fast: its clients are cut off) and waits
// until it is gone: the socket no longer answers.
func (pc *Cluster) Stop() {
	pc.t.Helper()
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if err := pc.c.halt(); err != nil {
		pc.t.Fatalf("pgtest: stop: %v", err)
	}
	pc.up = false
}

// Start starts the stopped server again on the same data and socket, and
// waits until it accepts connections.
func (pc *Cluster) Start() {
	pc.t.Helper()
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if err := pc.c.launch(); err != nil {
		pc.t.Fatalf("pgtest: %v", err)
	}
	pc.up = true
	if err := pc.c.waitReady(); err != nil {
		pc.t.Fatalf("pgtest: %v", err)
	}
}

// sanitize makes a test name usable in a database name.
func sanitize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	return out[:min(len(out), 40)]
}
