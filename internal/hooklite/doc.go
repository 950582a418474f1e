// Package hooklite is flower-hook-lite, the lean front of flower-hook's
// PreToolUse deny guards (delegate, whitelist, fence, isolate). Claude Code
// starts a hook process for every tool call; flower-hook links the shell
// parser, regexp and encoding/json, whose initialisation is most of its
// start. flower-hook-lite links only syscall and golang.org/x/sys/unix: it
// reads the hook input, hands it with its argv and environment to the
// decision server in the flower process that started the step (the report
// socket, $FLOWER_SOCKET, answers hook calls with hooks.Answer, running the
// same guard code in-process) and prints the answer.
//
// `flower-hook-lite /abs/flower-hook GUARD [flags]` < hook-input.json
//
// It trusts an answer only from the process named by $FLOWER_HOOK_SERVER:
// the socket's peer (SO_PEERCRED, taken when the server listened) must be
// that pid and this uid, checked before anything is sent; the answer must
// echo a fresh random nonce. In every other case — no socket or no server
// pid (plugin or settings-only use, `flower claude`), a peer that is some
// other process (a worker that replaced the socket), a refused, declined,
// malformed, oversized or slow answer — it execs the full flower-hook with
// the same argv, environment and input (an in-memory file on stdin), which
// decides as it always did. Never an allow by default: if even that exec
// fails, a deny guard denies (exit 2) and isolate answers {}.
//
// Elsewhere (not Linux on amd64 or arm64) it execs flower-hook at once.
package hooklite
