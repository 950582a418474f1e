package scripted

import (
	"strings"

	"github.com/flowerhq/flower/internal/envlist"
)

// scrubbed reports whether an inherited variable must not reach claude: it
// would point it at a real account, a real server, or a parent Claude Code.
func scrubbed(name string) bool {
	return name == "CLAUDECODE" || name == "HOME" || name == "FLOWER_SOCKET" ||
		strings.HasPrefix(name, "ANTHROPIC_") || strings.HasPrefix(name, "CLAUDE_") ||
		strings.HasPrefix(name, "AWS_BEARER") || strings.HasPrefix(name, "OTEL_")
}

// OfflineEnv turns env into the environment claude runs with against a
// scripted model at url, with home as HOME: anything that would reach a real
// account or server is dropped, and the offline settings are added (a test
// key, no nonessential traffic, one CLI retry).
func OfflineEnv(env []string, home, url string) []string {
	return append(envlist.Without(env, scrubbed),
		"HOME="+home,
		"ANTHROPIC_BASE_URL="+url,
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_MAX_RETRIES=1",
	)
}
