// Package harness is flower's execution core: one step = one claude process,
// made resilient (seed "Runtime").
//
// Lifecycle of a Runtime: New loads .env, checks credentials up front (a
// missing key fails here, never at the first step), opens the run's events
// file and starts the Unix socket that flower-hook reports to. Each Run
// compiles the AgentSpec into an argv plus a per-step settings.json
// (BuildArgs), starts claude in its own process group with stream-json in and
// out, writes the prompt as a user line, and turns every stdout line into
// Events until the process exits. The attempt loop then decides among the
// seed's four exits: success; human interrupt (resume the same session with
// the words + InterruptNote, not counted); context full (the same session
// writes its handoff document, a fresh session starts from its prompt
// block); retryable failure (classify, wait until the API answers, back off,
// resume). The finished StepResult is appended to manifest.json under a file
// lock. Close stops the socket and removes its directory.
//
// Choices where the seed is silent (written down here on purpose):
//   - permission_mode "default" sends no --permission-mode flag (2.1.328 calls
//     that mode "manual").
//   - Instructions, the optional prelude and the workbench block go to
//     --append-system-prompt, so the Claude Code preset prompt stays.
//   - The CLI's own retries are capped with CLAUDE_CODE_MAX_RETRIES (default
//     1) so that the Runtime's Resilience owns the retry policy.
//   - The Handoff document lives here (not in flow) because the Runtime writes
//     it; its section names are 在做什么 / 已定结论 / 走不通的路 / 下一步 / 现场.
package harness
