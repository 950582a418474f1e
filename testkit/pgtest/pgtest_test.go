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
