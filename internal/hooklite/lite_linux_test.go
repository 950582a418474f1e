//go:build linux && (amd64 || arm64)

package hooklite

import (
	"strings"
	"testing"
)

func TestRequestHoldsOnlyHex(t *testing.T) {
	line := request([]byte(testNonce), []string{"/x/flower-hook", "delegate", `--tools=a"b`}, []string{"HOME=/h\n"}, []byte("{\"a\":\n1}"))
	if !strings.HasPrefix(string(line), CallPrefix+testNonce+`","argv":"`) || !strings.HasSuffix(string(line), "\"}\n") {
		t.Fatalf("%q", line)
	}
	body := strings.TrimSuffix(strings.TrimPrefix(string(line), CallPrefix), "\"}\n")
	for _, f := range []string{`","argv":"`, `","env":"`, `","cwd":"`, `","input":"`} {
		body = strings.Replace(body, f, "", 1)
	}
	if strings.Trim(body, hexDigits) != "" {
		t.Errorf("not hex between the fields: %q", body)
	}
	if n := strings.Count(string(line), "\n"); n != 1 {
		t.Errorf("%d newlines, want the last only", n)
	}
}

func TestAtoi(t *testing.T) {
	for s, want := range map[string]int{"1": 1, "4242": 4242} {
		if n, ok := atoi(s, true); !ok || n != want {
			t.Errorf("atoi(%q) = %d %v", s, n, ok)
		}
	}
	for _, s := range []string{"", "0", "-1", "12a", "1234567890"} {
		if n, ok := atoi(s, true); ok {
			t.Errorf("atoi(%q) = %d, accepted", s, n)
		}
	}
	if _, ok := atoi("1", false); ok {
		t.Error("an unset variable accepted")
	}
}
