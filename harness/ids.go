package harness

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"github.com/flowerhq/flower/internal/lazyre"
)

// The names a Runtime gives things: run ids, project keys, times.

// NewRunID returns a sortable, collision-resistant run id.
func NewRunID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

var projectRe = lazyre.New(`[^A-Za-z0-9_-]+`)

// ProjectKey is the fixed CLAUDE_CODE_PROJECT_DIR_NAME of a workspace:
// its base name (sanitised) plus a short hash of the absolute path, at most
// 64 characters of [A-Za-z0-9_-].
func ProjectKey(workspace string) string {
	base := projectRe().ReplaceAllString(filepath.Base(workspace), "-")
	if len(base) > 40 {
		base = base[:40]
	}
	return fmt.Sprintf("%s-%08x", base, djb2(workspace))
}

func djb2(s string) uint32 {
	h := uint32(5381)
	for i := 0; i < len(s); i++ {
		h = h*33 + uint32(s[i])
	}
	return h
}

func unixNow() float64 { return float64(time.Now().UnixNano()) / 1e9 }
