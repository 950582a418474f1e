package pgtest_test

import (
	"database/sql"
	"os"
	"testing"

	"github.com/flowerhq/flower/testkit/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestFreshDatabasePerCall: two URLs name two databases; a table made in
// one is not in the other, and the server listens on its Unix socket only.
func TestFreshDatabasePerCall(t *testing.T) {
	a, b := pgtest.URL(t), pgtest.URL(t)
	if a == b {
		t.Fatalf("one URL twice: %s", a)
	}
	dba, err := sql.Open("pgx", a)
	if err != nil {
		t.Fatal(err)
	}
	defer dba.Close()
	if _, err := dba.Exec("CREATE TABLE marker (x int)"); err != nil {
		t.Fatal(err)
	}
	dbb, err := sql.Open("pgx", b)
	if err != nil {
		t.Fatal(err)
	}
	defer dbb.Close()
	var n int
	if err := dbb.QueryRow("SELECT count(*) FROM pg_tables WHERE tablename = 'marker'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("fresh database holds the other's table (n=%d, err=%v)", n, err)
	}
	if err := dba.QueryRow("SELECT count(*) FROM pg_tables WHERE tablename = 'marker'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("control: the table is not in its own database (n=%d, err=%v)", n, err)
	}
	var listen string
	if err := dba.QueryRow("SHOW listen_addresses").Scan(&listen); err != nil || listen != "" {
		t.Fatalf("listen_addresses = %q (%v), want '' (socket only)", listen, err)
	}
}

// TestPrivateStopStart: a private cluster is down between Stop and Start
// (a query fails), keeps its data across them, and is not the shared one
// (the shared cluster answers all along: the control that the outage is
// the private cluster's own).
func TestPrivateStopStart(t *testing.T) {
	t.Parallel()
	pc := pgtest.Private(t)
	u := pc.URL()
	shared, err := sql.Open("pgx", pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	pc.Stop()
	if err := db.Ping(); err == nil {
		t.Fatal("the private cluster answers while stopped")
	}
	if err := shared.Ping(); err != nil {
		t.Fatalf("control: the shared cluster went down with the private one: %v", err)
	}
	pc.Start()
	var x int
	if err := db.QueryRow("SELECT x FROM kept").Scan(&x); err != nil || x != 7 {
		t.Fatalf("after Start: x = %d, %v", x, err)
	}
}
